import type { TenantId } from '@kb/contracts';
import type { EmbeddingProvider } from '@kb/embeddings';
import type { VectorStore } from '@kb/vector-store';
import { Inject, Injectable } from '@nestjs/common';
import { EMBEDDING_PROVIDER, VECTOR_STORE } from '../platform/tokens';
import type { SearchRequest, SearchResponse } from './search.model';

/** Semantic search over a tenant's chunks; REST and gRPC both call this. */
@Injectable()
export class SearchService {
  constructor(
    @Inject(EMBEDDING_PROVIDER) private readonly embedder: EmbeddingProvider,
    @Inject(VECTOR_STORE) private readonly vectors: VectorStore,
  ) {}

  async search(tenantId: TenantId, request: SearchRequest): Promise<SearchResponse> {
    const started = performance.now();
    const [vector] = await this.embedder.embed([request.query]);
    if (!vector) throw new Error('embedding provider returned no vector');
    const matches = await this.vectors.query(tenantId, { vector, topK: request.topK });
    return { hits: matches, tookMs: round(performance.now() - started) };
  }
}

const round = (ms: number): number => Math.round(ms * 100) / 100;
