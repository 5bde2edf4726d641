import type { EmbeddingProvider } from '@kb/embeddings';
import {
  CLOSERS,
  HealthController,
  READINESS_CHECKS,
  Readiness,
  ResourceCloser,
  type Closer,
} from '@kb/http';
import type { LexicalIndex } from '@kb/lexical-index';
import type { VectorStore } from '@kb/vector-store';
import { Module, type DynamicModule } from '@nestjs/common';
import { QUERY_CONFIG, type QueryConfig } from './config/query.config';
import { EMBEDDING_PROVIDER, LEXICAL_INDEX, VECTOR_STORE } from './platform/tokens';
import { SearchController } from './search/search.controller';
import { KnowledgeBaseGrpcServer } from './search/search.grpc';
import { SearchService } from './search/search.service';

export interface QueryDeps {
  config: QueryConfig;
  provider: EmbeddingProvider;
  vectors: VectorStore;
  lexical: LexicalIndex;
}

@Module({})
export class AppModule {
  static register(deps: QueryDeps): DynamicModule {
    const closers: Closer[] = [
      () => deps.vectors.close(),
      () => deps.lexical.close(),
      async () => deps.provider.close?.(),
    ];
    return {
      module: AppModule,
      controllers: [SearchController, HealthController],
      providers: [
        { provide: QUERY_CONFIG, useValue: deps.config },
        { provide: EMBEDDING_PROVIDER, useValue: deps.provider },
        { provide: VECTOR_STORE, useValue: deps.vectors },
        { provide: LEXICAL_INDEX, useValue: deps.lexical },
        { provide: CLOSERS, useValue: closers },
        ResourceCloser,
        SearchService,
        KnowledgeBaseGrpcServer,
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [KnowledgeBaseGrpcServer],
          useFactory: (grpc: KnowledgeBaseGrpcServer) => [
            { name: 'grpc', check: async () => grpc.port !== undefined },
          ],
        },
      ],
    };
  }
}
