import type { EmbeddingProvider } from '@kb/embeddings';
import {
  CLOSERS,
  HealthController,
  MetricsController,
  READINESS_CHECKS,
  Readiness,
  ResourceCloser,
  type Closer,
} from '@kb/http';
import type { LexicalIndex, PgIndexGenerations } from '@kb/lexical-index';
import type { VectorStore } from '@kb/vector-store';
import { Module, type DynamicModule } from '@nestjs/common';
import { QUERY_CONFIG, type QueryConfig } from './config/query.config';
import type { SearchCache } from './cache/search-cache';
import {
  EMBEDDING_PROVIDER,
  GENERATIONS,
  LEXICAL_INDEX,
  SEARCH_CACHE,
  VECTOR_STORE,
} from './platform/tokens';
import { ContextController } from './context/context.controller';
import { ContextService } from './context/context.service';
import { SearchController } from './search/search.controller';
import { KnowledgeBaseGrpcServer } from './search/search.grpc';
import { SearchService } from './search/search.service';
import { DocumentsClient } from './documents/documents.client';
import { OpenApiController } from './openapi.controller';

export interface QueryDeps {
  config: QueryConfig;
  provider: EmbeddingProvider;
  vectors: VectorStore;
  lexical: LexicalIndex;
  generations: PgIndexGenerations;
  cache: SearchCache | null;
}

@Module({})
export class AppModule {
  static register(deps: QueryDeps): DynamicModule {
    const closers: Closer[] = [
      () => deps.vectors.close(),
      () => deps.lexical.close(),
      () => deps.generations.close(),
      async () => deps.cache?.close(),
      async () => deps.provider.close?.(),
    ];
    return {
      module: AppModule,
      controllers: [
        SearchController,
        ContextController,
        OpenApiController,
        HealthController,
        MetricsController,
      ],
      providers: [
        { provide: QUERY_CONFIG, useValue: deps.config },
        { provide: EMBEDDING_PROVIDER, useValue: deps.provider },
        { provide: VECTOR_STORE, useValue: deps.vectors },
        { provide: LEXICAL_INDEX, useValue: deps.lexical },
        { provide: GENERATIONS, useValue: deps.generations },
        { provide: SEARCH_CACHE, useValue: deps.cache },
        { provide: CLOSERS, useValue: closers },
        ResourceCloser,
        SearchService,
        DocumentsClient,
        ContextService,
        KnowledgeBaseGrpcServer,
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [KnowledgeBaseGrpcServer],
          useFactory: (grpc: KnowledgeBaseGrpcServer) => [
            { name: 'grpc', check: async () => grpc.port !== undefined },
            // Ready while either index answers: with one down, searches degrade instead of failing.
            {
              name: 'search-backend',
              check: async () =>
                (await Promise.allSettled([deps.vectors.ping(), deps.lexical.ping()])).some(
                  (r) => r.status === 'fulfilled',
                ),
            },
          ],
        },
      ],
    };
  }
}
