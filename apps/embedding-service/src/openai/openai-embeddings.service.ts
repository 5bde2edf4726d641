import { OPENAI_MODEL_OWNER, type OpenAiModel, type OpenAiModelList } from '@kb/contracts';
import { type EmbeddingProvider, embedInBatches, estimateTokens } from '@kb/embeddings';
import { MODEL_API_QUEUE, ModelRunQueue } from '@kb/http';
import { meter } from '@kb/observability';
import { Inject, Injectable, Optional } from '@nestjs/common';

import type { CachedEmbedder } from '../cache/cached.embedder';
import { EMBEDDING_CONFIG, type EmbeddingServiceConfig } from '../config/embedding.config';
import { EMBEDDER } from '../platform/tokens';
import { OpenAiError, OpenAiErrorCode } from './openai.errors';
import {
  type EmbeddingsRequest,
  embeddingsRequestSchema,
  type EmbeddingsResponse,
  MAX_INPUT_CHARACTERS,
  MAX_INPUTS,
  toBase64Float32,
} from './openai.model';

const apiInputs = meter().createCounter('kb_openai_embedding_inputs_total', {
  description: 'Texts embedded through POST /v1/embeddings, by model',
});

/** Token ids: a number array, or an array of them. */
const isTokenInput = (input: unknown): boolean =>
  Array.isArray(input) &&
  input.length > 0 &&
  input.every((item) => typeof item === 'number' || Array.isArray(item));

/**
 * OpenAI's embeddings API over the models this service serves (ADR 23): the same embedders the
 * pipeline uses, so a vector from here compares with the indexed ones. It calls the model
 * directly, not through the embedding cache: the cache holds chunk texts, and arbitrary API
 * inputs would grow it without bound.
 */
@Injectable()
export class OpenAiEmbeddingsService {
  /** Unix seconds: OpenAI's `created`, here when the service began serving its models. */
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    @Inject(EMBEDDER) private readonly embedders: ReadonlyMap<string, CachedEmbedder>,
    @Inject(EMBEDDING_CONFIG)
    private readonly config: Pick<EmbeddingServiceConfig, 'EMBEDDING_BATCH_SIZE'>,
    @Optional() @Inject(MODEL_API_QUEUE) queue?: ModelRunQueue,
  ) {
    this.queue = queue ?? new ModelRunQueue({ name: 'embeddings', concurrency: 1, maxWaiting: 16 });
  }

  /** API calls' model runs wait here, apart from ingestion's: 429 `model_busy` when it is full. */
  private readonly queue: ModelRunQueue;

  models(): OpenAiModelList {
    return {
      object: 'list',
      data: [...this.embedders].map(([id, embedder]) => this.modelObject(id, embedder.provider)),
    };
  }

  model(id: string): OpenAiModel {
    return this.modelObject(id, this.providerOf(id));
  }

  /** Validates an embeddings request as received (the body is checked here, once). */
  parse(body: unknown): EmbeddingsRequest {
    const input = (body as { input?: unknown } | null)?.input;
    if (isTokenInput(input)) {
      throw new OpenAiError(
        OpenAiErrorCode.TokenInputUnsupported,
        'input as token ids is not supported: the ids of your tokenizer mean nothing to this model; send text',
        'input',
      );
    }
    const result = embeddingsRequestSchema.safeParse(body);
    if (!result.success) {
      const issue = result.error.issues[0]!;
      const param = issue.path.length > 0 ? issue.path.join('.') : null;
      throw new OpenAiError(
        OpenAiErrorCode.InvalidRequest,
        result.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
        param,
      );
    }
    const texts = typeof result.data.input === 'string' ? [result.data.input] : result.data.input;
    const characters = texts.reduce((sum, text) => sum + text.length, 0);
    if (texts.length > MAX_INPUTS || characters > MAX_INPUT_CHARACTERS) {
      throw new OpenAiError(
        OpenAiErrorCode.InputTooLarge,
        `input has ${texts.length} texts and ${characters} characters; at most ${MAX_INPUTS} texts and ${MAX_INPUT_CHARACTERS} characters in all`,
        'input',
      );
    }
    return result.data;
  }

  async embed(tenantId: string, request: EmbeddingsRequest): Promise<EmbeddingsResponse> {
    const provider = this.providerOf(request.model);
    if (request.dimensions !== undefined && request.dimensions !== provider.dimension) {
      throw new OpenAiError(
        OpenAiErrorCode.DimensionsUnsupported,
        `model "${request.model}" produces ${provider.dimension} dimensions, not ${request.dimensions}`,
        'dimensions',
      );
    }
    const texts = typeof request.input === 'string' ? [request.input] : request.input;
    // The tenant keys a remote API's rate limit, as for the tenant's documents.
    const vectors = await this.queue.run(() =>
      embedInBatches(provider, texts, this.config.EMBEDDING_BATCH_SIZE, { tenantId }),
    );
    const tokens = provider.countTokens ? await provider.countTokens(texts) : estimateTokens(texts);
    apiInputs.add(texts.length, { model: provider.model });
    return {
      object: 'list',
      data: vectors.map((vector, index) => ({
        object: 'embedding',
        index,
        embedding: request.encoding_format === 'base64' ? toBase64Float32(vector) : vector,
      })),
      model: request.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
  }

  private providerOf(id: string): EmbeddingProvider {
    const embedder = this.embedders.get(id);
    if (!embedder) {
      throw new OpenAiError(
        OpenAiErrorCode.ModelNotFound,
        `The model \`${id}\` does not exist or is not served here (served: ${[...this.embedders.keys()].join(', ')})`,
        'model',
      );
    }
    return embedder.provider;
  }

  private modelObject(id: string, provider: EmbeddingProvider): OpenAiModel {
    return {
      id,
      object: 'model',
      created: this.created,
      owned_by: OPENAI_MODEL_OWNER,
      kind: 'embedding',
      dimension: provider.dimension,
    };
  }
}
