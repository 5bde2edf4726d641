import { Inject, Injectable } from '@nestjs/common';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { KnowledgeBaseError, KnowledgeBaseErrorCode } from './knowledge-bases.errors';

/** Which embedding models the deployment serves, and their dimensions. */
export interface ModelCatalog {
  /** The model's dimension, or undefined when it is not served. */
  dimensionOf(model: string): Promise<number | undefined>;
}
export const MODEL_CATALOG = Symbol('MODEL_CATALOG');

const TIMEOUT_MS = 5_000;

/**
 * Asks embedding-service (`GET /v1/internal/models`; its `/v1/models` is the OpenAI-compatible
 * list for outside clients), which loads the models, rather than trusting a list
 * of names: a knowledge base is created only for a model that is really served, and its dimension
 * is what the model produces. Not cached: knowledge bases are created rarely.
 */
@Injectable()
export class EmbeddingServiceCatalog implements ModelCatalog {
  constructor(
    @Inject(DOCUMENT_CONFIG) private readonly config: Pick<DocumentConfig, 'EMBEDDING_SERVICE_URL'>,
  ) {}

  async dimensionOf(model: string): Promise<number | undefined> {
    let items: Array<{ model: string; dimension: number }>;
    try {
      const response = await fetch(
        new URL('/v1/internal/models', this.config.EMBEDDING_SERVICE_URL),
        {
          signal: AbortSignal.timeout(TIMEOUT_MS),
        },
      );
      if (!response.ok) throw new Error(`it answered ${response.status}`);
      ({ items } = (await response.json()) as { items: typeof items });
    } catch (error) {
      throw new KnowledgeBaseError(
        KnowledgeBaseErrorCode.EmbeddingServiceUnavailable,
        `cannot check the embedding model with embedding-service: ${String(error)}`,
      );
    }
    return items.find((item) => item.model === model)?.dimension;
  }
}
