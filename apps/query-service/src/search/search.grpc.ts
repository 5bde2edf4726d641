import { type Access, type Caller, readFilterOf } from '@kb/auth';
import { kbv1 } from '@kb/contracts';
import { CurrentGrpcCall, type GrpcCall, GrpcService, sendResponseHeaders } from '@kb/grpc';
import { Authenticated, CurrentAccess, CurrentCaller, parseBody } from '@kb/http';
import { collectStageTimings } from '@kb/observability';
import { GrpcMethod, Payload } from '@nestjs/microservices';

import { SearchAudit } from '../audit/search-audit.publisher';
import type { FusionMethod } from './fusion.ranking';
import { remainingOfDeadline } from './search.budget';
import { MAX_TIMEOUT_MS, type SearchMode, searchRequestSchema } from './search.model';
import { SearchService } from './search.service';
import { toCachedSearchResponse, toWireHit } from './search.wire';
import { similarRequestSchema } from './similar.model';
import { SimilarService } from './similar.service';

const MODES: Record<kbv1.SearchMode, SearchMode | undefined> = {
  [kbv1.SearchMode.SEARCH_MODE_UNSPECIFIED]: undefined,
  [kbv1.SearchMode.SEARCH_MODE_HYBRID]: 'hybrid',
  [kbv1.SearchMode.SEARCH_MODE_SEMANTIC]: 'semantic',
  [kbv1.SearchMode.SEARCH_MODE_LEXICAL]: 'lexical',
  [kbv1.SearchMode.SEARCH_MODE_AUTO]: 'auto',
  [kbv1.SearchMode.UNRECOGNIZED]: undefined,
};

const FUSIONS: Record<kbv1.FusionMethod, FusionMethod | undefined> = {
  [kbv1.FusionMethod.FUSION_METHOD_UNSPECIFIED]: undefined,
  [kbv1.FusionMethod.FUSION_METHOD_ADAPTIVE]: 'adaptive',
  [kbv1.FusionMethod.FUSION_METHOD_CONVEX]: 'convex',
  [kbv1.FusionMethod.FUSION_METHOD_RRF]: 'rrf',
  [kbv1.FusionMethod.UNRECOGNIZED]: undefined,
};

/** A wire search mode as the request schemas take it: unspecified (or unknown) means their default. */
export const modeOf = (mode: kbv1.SearchMode): SearchMode | undefined => MODES[mode];

/** The time to the call's deadline, within what a request may ask; undefined without one. */
export function budgetOfCall(call: GrpcCall): number | undefined {
  const remaining = call.getDeadline ? remainingOfDeadline(call.getDeadline()) : undefined;
  return remaining === undefined ? undefined : Math.min(remaining, MAX_TIMEOUT_MS);
}

/** `kb.v1.KnowledgeBase/Search`: thin, like `POST /v1/search`. */
@GrpcService()
export class SearchGrpcController {
  constructor(
    private readonly search: SearchService,
    private readonly similarity: SimilarService,
    private readonly audit: SearchAudit,
  ) {}

  /** Searches the documents the caller may read (all of the tenant's for an admin). */
  @GrpcMethod('KnowledgeBase', 'Search')
  @Authenticated({ access: true, rateLimit: 'search' })
  async run(
    @Payload() message: kbv1.SearchRequest,
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @CurrentGrpcCall() call: GrpcCall,
  ): Promise<kbv1.SearchResponse> {
    const request = parseBody(searchRequestSchema, {
      query: message.query,
      topK: message.topK,
      knowledgeBaseIds: message.knowledgeBaseIds,
      mode: modeOf(message.mode),
      fusion: FUSIONS[message.fusion],
      neighbors: message.neighbors,
      minScore: message.minScore,
      rerank: message.rerank,
      filter: message.filter,
      offset: message.offset,
      mmr: message.mmr,
      mmrLambda: message.mmrLambda,
      // The call's deadline is the search's budget (docs/adr/0042).
      timeoutMs: budgetOfCall(call),
    });
    const { result: response, timings } = await collectStageTimings(() =>
      this.search.search(caller.tenantId, request, readFilterOf(access), caller),
    );
    this.audit.record(caller.tenantId, caller.userId, 'search', request.query, response.hits, {
      knowledgeBaseIds: request.knowledgeBaseIds,
      reranked: response.rerank === 'applied',
    });
    // Where the time went, as HTTP's Server-Timing header (docs/adr/0029).
    timings.add('total', response.tookMs);
    sendResponseHeaders(call, { 'server-timing': timings.header() });
    return toCachedSearchResponse(response);
  }

  /** Chunks or documents similar to a text or to a document, like `POST /v1/search/similar`. */
  @GrpcMethod('KnowledgeBase', 'SearchSimilar')
  @Authenticated({ access: true, rateLimit: 'search' })
  async similar(
    @Payload() message: kbv1.SearchSimilarRequest,
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
  ): Promise<kbv1.SearchSimilarResponse> {
    const request = parseBody(similarRequestSchema, {
      text: message.text || undefined,
      documentId: message.documentId || undefined,
      unit: message.unit || undefined,
      topK: message.topK,
      knowledgeBaseIds: message.knowledgeBaseIds,
      filter: message.filter,
    });
    const response = await this.similarity.similar(caller, request, readFilterOf(access));
    const asked = request.text ?? `similar to document ${request.documentId}`;
    this.audit.record(caller.tenantId, caller.userId, 'search', asked, response.hits);
    return { hits: response.hits.map(toWireHit), tookMs: response.tookMs, unit: response.unit };
  }
}
