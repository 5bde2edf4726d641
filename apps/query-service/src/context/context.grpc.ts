import { type Access, type Caller, readFilterOf } from '@kb/auth';
import type { kbv1 } from '@kb/contracts';
import { CurrentGrpcCall, type GrpcCall, GrpcService } from '@kb/grpc';
import { Authenticated, CurrentAccess, CurrentCaller, parseBody } from '@kb/http';
import { GrpcMethod, Payload } from '@nestjs/microservices';

import { SearchAudit } from '../audit/search-audit.publisher';
import { budgetOfCall, modeOf } from '../search/search.grpc';
import { ContextService, retrieveContextSchema } from './context.service';

/** `kb.v1.KnowledgeBase/RetrieveContext`: thin, like `POST /v1/context`. */
@GrpcService()
export class ContextGrpcController {
  constructor(
    private readonly context: ContextService,
    private readonly audit: SearchAudit,
  ) {}

  @GrpcMethod('KnowledgeBase', 'RetrieveContext')
  @Authenticated({ access: true, rateLimit: 'search' })
  async retrieve(
    @Payload() message: kbv1.RetrieveContextRequest,
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @CurrentGrpcCall() call: GrpcCall,
  ): Promise<kbv1.RetrieveContextResponse> {
    const request = parseBody(retrieveContextSchema, {
      question: message.question,
      messages: message.messages,
      tokenBudget: message.tokenBudget,
      candidates: message.candidates,
      mode: modeOf(message.mode),
      knowledgeBaseIds: message.knowledgeBaseIds,
      filter: message.filter,
      timeoutMs: budgetOfCall(call),
      rerank: message.rerank,
    });
    const { hits, ...response } = await this.context.retrieve(
      caller.tenantId,
      request,
      readFilterOf(access),
      caller,
    );
    this.audit.record(
      caller.tenantId,
      caller.userId,
      'retrieve_context',
      response.standaloneQuery,
      hits,
      { knowledgeBaseIds: request.knowledgeBaseIds, reranked: response.rerank === 'applied' },
    );
    return {
      passages: response.passages,
      tokensUsed: response.tokensUsed,
      tokenBudget: response.tokenBudget,
      truncated: response.truncated,
      degraded: response.degraded,
      degradedReason: response.degradedReason ?? '',
      queryStrategy: response.queryStrategy,
      standaloneQuery: response.standaloneQuery,
      rerank: response.rerank,
    };
  }
}
