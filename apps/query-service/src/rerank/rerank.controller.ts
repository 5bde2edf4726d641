import type { Permission } from '@kb/auth';
import { ApiOperation, Authenticated, parseBody } from '@kb/http';
import { Body, Controller, HttpCode, Post } from '@nestjs/common';

import { rerankRequestSchema, type RerankResponse, rerankResponseSchema } from './rerank.model';
import { RerankService } from './rerank.service';

/**
 * Rerank runs the cross-encoder, so it takes what reading the knowledge base takes: `read` on
 * documents, which every member of a tenant holds by default (acl-service's built-in policy), as
 * the search that runs the same model does.
 */
export const RERANK_PERMISSION: Permission = { action: 'read', resource: 'documents' };

/**
 * `POST /v1/rerank`: reads no tenant data, only the passages it is sent, but each call is up to
 * 200 cross-encoder passes in the process that serves searches (security review N5): it needs
 * `read` on documents (403 `permission_denied`), draws on the `model` rate-limit budget (429
 * `rate_limited`) and waits in its own bounded queue for the model (429 `model_busy`).
 */
@Controller('v1/rerank')
export class RerankController {
  constructor(private readonly service: RerankService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    operationId: 'rerank',
    summary:
      'Order passages by the cross-encoder\u2019s relevance to a query (503 cross_encoder_not_loaded without one)',
    body: rerankRequestSchema,
    response: rerankResponseSchema,
    // Needs read on documents; over the model budget or its queue full: 429 (docs/adr/0023).
    errors: [403, 429],
  })
  @Authenticated({ permission: RERANK_PERMISSION, rateLimit: 'model' })
  async rerank(@Body() body: unknown): Promise<RerankResponse> {
    return this.service.rerank(parseBody(rerankRequestSchema, body));
  }
}
