export * from './batching-embedding-provider';
export * from './cross-encoder-model';
export * from './cross-encoder-pool';
export * from './embedding-provider';
export * from './from-config';
export * from './model-catalog';
export * from './onnx-embedding-provider';
export * from './onnx-worker-pool';
export {
  EmbeddingApiError,
  type EmbeddingApiErrorCode,
  isTransient,
} from './openai-compatible/embedding-api.errors';
export * from './openai-compatible/openai-embedding-provider';
export { estimateTokens, type RateLimit } from './openai-compatible/rate-limiter';
export * from './test-embedding-provider';
