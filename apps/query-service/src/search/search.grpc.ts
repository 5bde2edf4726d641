import { AccessResolver, type Caller, type TokenVerifier } from '@kb/auth';
import { kbv1 } from '@kb/contracts';
import { accessOf, ApiError, authenticate } from '@kb/http';
import { SearchAudit } from '../audit/search-audit';
import { TOKEN_VERIFIER } from '../platform/tokens';
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
import { z } from 'zod';
import { searchRequestSchema, type SearchMode } from './search.model';
import { ContextService, retrieveContextSchema } from '../context/context.service';
import { SearchService } from './search.service';
import { DocumentsClient, type DocumentRecord } from '../documents/documents.client';

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
    private readonly documents: DocumentsClient,
    private readonly access: AccessResolver,
    private readonly audit: SearchAudit,
    @Inject(TOKEN_VERIFIER) private readonly verifier: TokenVerifier,
    @Inject(QUERY_CONFIG) private readonly config: QueryConfig,
  ) {
    const implementation: kbv1.KnowledgeBaseServer = {
      search: (call, callback) => void this.handleSearch(call, callback),
      retrieveContext: (call, callback) => void this.handleRetrieveContext(call, callback),
      getDocument: (call, callback) =>
        void unary(this.logger, callback, async () => {
          const caller = await this.caller(call.metadata);
          const id = validated(documentIdSchema, call.request.documentId);
          return { document: toDocument(await this.documents.get(caller, id)) };
        }),
      listDocuments: (call, callback) =>
        void unary(this.logger, callback, async () => {
          const caller = await this.caller(call.metadata);
          const { pageSize, pageToken } = validated(listDocumentsSchema, call.request);
          const page = await this.documents.list(caller, pageSize, pageToken);
          return {
            documents: page.items.map(toDocument),
            nextPageToken: page.nextCursor ?? '',
          };
        }),
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

  /** The caller of a call: the bearer token in its `authorization` metadata (else UNAUTHENTICATED). */
  private caller(metadata: Metadata): Promise<Caller> {
    const value = metadata.get('authorization')[0];
    return authenticate(this.verifier, typeof value === 'string' ? value : undefined);
  }

  /** What the caller may read: their principals, or no filter for a tenant admin. */
  private async principalsOf(caller: Caller): Promise<string[] | undefined> {
    const access = await accessOf(this.access, caller);
    return access.isAdmin ? undefined : access.principals;
  }

  private async handleRetrieveContext(
    call: ServerUnaryCall<kbv1.RetrieveContextRequest, kbv1.RetrieveContextResponse>,
    callback: sendUnaryData<kbv1.RetrieveContextResponse>,
  ): Promise<void> {
    try {
      const caller = await this.caller(call.metadata);
      const request = validated(retrieveContextSchema, {
        question: call.request.question,
        tokenBudget: call.request.tokenBudget,
        candidates: call.request.candidates,
        mode: MODES[call.request.mode],
        knowledgeBaseIds: call.request.knowledgeBaseIds,
        filter: call.request.filter,
      });
      const { hits, ...response } = await this.context.retrieve(
        caller.tenantId,
        request,
        await this.principalsOf(caller),
      );
      this.audit.record(caller.tenantId, caller.userId, 'retrieve_context', request.question, hits);
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
      const caller = await this.caller(call.metadata);
      const request = validated(searchRequestSchema, {
        query: call.request.query,
        topK: call.request.topK,
        knowledgeBaseIds: call.request.knowledgeBaseIds,
        mode: MODES[call.request.mode],
        fusion: FUSIONS[call.request.fusion],
        neighbors: call.request.neighbors,
        minScore: call.request.minScore,
        rerank: call.request.rerank,
        filter: call.request.filter,
        offset: call.request.offset,
        mmr: call.request.mmr,
        mmrLambda: call.request.mmrLambda,
      });
      const response = await this.search.search(
        caller.tenantId,
        request,
        await this.principalsOf(caller),
      );
      this.audit.record(caller.tenantId, caller.userId, 'search', request.query, response.hits);
      callback(null, {
        tookMs: response.tookMs,
        degraded: response.degraded,
        degradedReason: response.degradedReason ?? '',
        cacheHit: response.cache === 'hit',
        confidence: response.confidence,
        rerank: response.rerank,
        mmr: response.mmr,
        nextOffset: response.nextOffset,
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

const documentIdSchema = z.uuid({ version: 'v4', error: 'document_id must be a UUID' });
const listDocumentsSchema = z.object({
  pageSize: z
    .number()
    .int()
    .max(100, 'page_size must be at most 100')
    .transform((n) => (n === 0 ? 20 : n)),
  pageToken: z
    .string()
    .max(512)
    .transform((t) => t || undefined),
});

/** Runs a unary handler, turning its result or error into the callback's. */
async function unary<T>(
  logger: Logger,
  callback: sendUnaryData<T>,
  handler: () => Promise<T>,
): Promise<void> {
  try {
    callback(null, await handler());
  } catch (error) {
    callback(toServiceError(error, logger));
  }
}

function toDocument(record: DocumentRecord): kbv1.Document {
  return {
    id: record.id,
    title: record.title,
    filename: record.filename,
    contentType: record.contentType,
    sizeBytes: record.sizeBytes,
    sha256: record.sha256,
    version: record.version,
    status: record.status,
    failureReason: record.failure?.reason ?? '',
    failureDetail: record.failure?.detail ?? '',
    chunkCount: record.chunkCount ?? 0,
    metadata: record.metadata,
    tags: record.tags,
    knowledgeBaseIds: record.knowledgeBaseIds,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
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

function toServiceError(error: unknown, logger: Logger): Partial<ServiceError> {
  if (error instanceof ApiError) {
    const metadata = new Metadata();
    metadata.set('x-error-code', error.code);
    return { code: HTTP_TO_GRPC[error.status] ?? status.UNKNOWN, details: error.message, metadata };
  }
  logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  return { code: status.INTERNAL, details: 'internal error' };
}
