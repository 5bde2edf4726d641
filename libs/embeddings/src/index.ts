export * from './embedding-provider';
export * from './onnx-embedding-provider';
export * from './test-embedding-provider';
