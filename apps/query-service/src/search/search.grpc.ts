import { isTenantId, kbv1, type TenantId } from '@kb/contracts';
import { ApiError, TENANT_HEADER } from '@kb/http';
import {
  Metadata,
  Server,
  ServerCredentials,
  status,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServiceError,
} from '@grpc/grpc-js';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type BeforeApplicationShutdown,
} from '@nestjs/common';
import { QUERY_CONFIG, type QueryConfig } from '../config/query.config';
import type { z } from 'zod';
import { searchRequestSchema, type SearchMode } from './search.model';
import { ContextService, retrieveContextSchema } from '../context/context.service';
import { SearchService } from './search.service';

const MODES: Record<kbv1.SearchMode, SearchMode | undefined> = {
  [kbv1.SearchMode.SEARCH_MODE_UNSPECIFIED]: undefined,
  [kbv1.SearchMode.SEARCH_MODE_HYBRID]: 'hybrid',
  [kbv1.SearchMode.SEARCH_MODE_SEMANTIC]: 'semantic',
  [kbv1.SearchMode.SEARCH_MODE_LEXICAL]: 'lexical',
  [kbv1.SearchMode.UNRECOGNIZED]: undefined,
};

const FUSIONS: Record<kbv1.FusionMethod, 'convex' | 'rrf' | undefined> = {
  [kbv1.FusionMethod.FUSION_METHOD_UNSPECIFIED]: undefined,
  [kbv1.FusionMethod.FUSION_METHOD_CONVEX]: 'convex',
  [kbv1.FusionMethod.FUSION_METHOD_RRF]: 'rrf',
  [kbv1.FusionMethod.UNRECOGNIZED]: undefined,
};

const HTTP_TO_GRPC: Record<number, status> = {
  400: status.INVALID_ARGUMENT,
  401: status.UNAUTHENTICATED,
  403: status.PERMISSION_DENIED,
  404: status.NOT_FOUND,
  503: status.UNAVAILABLE,
};

/** The gRPC transport of `kb.v1.KnowledgeBase`: thin, like the REST controller. */
@Injectable()
export class KnowledgeBaseGrpcServer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(KnowledgeBaseGrpcServer.name);
  private readonly server = new Server();
  private boundPort?: number;

  constructor(
    private readonly search: SearchService,
    private readonly context: ContextService,
    @Inject(QUERY_CONFIG) private readonly config: QueryConfig,
  ) {
    const implementation: kbv1.KnowledgeBaseServer = {
      search: (call, callback) => void this.handleSearch(call, callback),
      retrieveContext: (call, callback) => void this.handleRetrieveContext(call, callback),
    };
    this.server.addService(kbv1.KnowledgeBaseService, implementation);
  }

  get port(): number | undefined {
    return this.boundPort;
  }

  async onApplicationBootstrap(): Promise<void> {
    const address = `${this.config.GRPC_HOST}:${this.config.GRPC_PORT}`;
    this.boundPort = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(address, ServerCredentials.createInsecure(), (error, port) =>
        error ? reject(error) : resolve(port),
      ),
    );
    this.logger.log(
      `gRPC kb.v1.KnowledgeBase listening on ${this.config.GRPC_HOST}:${this.boundPort}`,
    );
  }

  /** Stops taking calls and lets in-flight ones finish before the stores close. */
  async beforeApplicationShutdown(): Promise<void> {
    await new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
  }

  private async handleRetrieveContext(
    call: ServerUnaryCall<kbv1.RetrieveContextRequest, kbv1.RetrieveContextResponse>,
    callback: sendUnaryData<kbv1.RetrieveContextResponse>,
  ): Promise<void> {
    try {
      const tenantId = tenantOf(call.metadata);
      const request = validated(retrieveContextSchema, {
        question: call.request.question,
        tokenBudget: call.request.tokenBudget,
        candidates: call.request.candidates,
        mode: MODES[call.request.mode],
      });
      const response = await this.context.retrieve(tenantId, request);
      callback(null, {
        passages: response.passages,
        tokensUsed: response.tokensUsed,
        tokenBudget: response.tokenBudget,
        truncated: response.truncated,
        degraded: response.degraded,
        degradedReason: response.degradedReason ?? '',
      });
    } catch (error) {
      callback(toServiceError(error, this.logger));
    }
  }

  private async handleSearch(
    call: ServerUnaryCall<kbv1.SearchRequest, kbv1.SearchResponse>,
    callback: sendUnaryData<kbv1.SearchResponse>,
  ): Promise<void> {
    try {
      const tenantId = tenantOf(call.metadata);
      const request = validated(searchRequestSchema, {
        query: call.request.query,
        topK: call.request.topK,
        knowledgeBaseIds: call.request.knowledgeBaseIds,
        mode: MODES[call.request.mode],
        fusion: FUSIONS[call.request.fusion],
        neighbors: call.request.neighbors,
        minScore: call.request.minScore,
        rerank: call.request.rerank,
      });
      const response = await this.search.search(tenantId, request);
      callback(null, {
        tookMs: response.tookMs,
        degraded: response.degraded,
        degradedReason: response.degradedReason ?? '',
        cacheHit: response.cache === 'hit',
        confidence: response.confidence,
        rerank: response.rerank,
        hits: response.hits.map((hit) => ({
          documentId: hit.documentId,
          documentVersion: hit.documentVersion,
          chunkIndex: hit.chunkIndex,
          text: hit.text,
          score: hit.score,
          title: hit.title,
          startOffset: hit.startOffset,
          endOffset: hit.endOffset,
          strategies: hit.strategies,
          isMatch: hit.isMatch,
        })),
      });
    } catch (error) {
      callback(toServiceError(error, this.logger));
    }
  }
}

/** Validates a request like the REST edge does; failures become INVALID_ARGUMENT. */
function validated<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const message = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ApiError(400, 'invalid_argument', message);
  }
  return result.data;
}

function tenantOf(metadata: Metadata): TenantId {
  const value = metadata.get(TENANT_HEADER)[0];
  if (typeof value !== 'string' || !isTenantId(value)) {
    throw new ApiError(401, 'unauthenticated', `metadata ${TENANT_HEADER} is required`);
  }
  return value;
}

function toServiceError(error: unknown, logger: Logger): Partial<ServiceError> {
  if (error instanceof ApiError) {
    const metadata = new Metadata();
    metadata.set('x-error-code', error.code);
    return { code: HTTP_TO_GRPC[error.status] ?? status.UNKNOWN, details: error.message, metadata };
  }
  logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  return { code: status.INTERNAL, details: 'internal error' };
}
