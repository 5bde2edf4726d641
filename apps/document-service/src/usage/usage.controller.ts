import type { Access, Caller } from '@kb/auth';
import {
  ApiOperation,
  Authenticated,
  CurrentAccess,
  CurrentCaller,
  parseBody,
  queryParameters,
} from '@kb/http';
import { Body, Controller, Get, Put, Query } from '@nestjs/common';

import {
  type QuotasView,
  quotasViewSchema,
  setQuotasSchema,
  usageQuerySchema,
  type UsageView,
  usageViewSchema,
} from './usage.model';
import { UsageService } from './usage.service';

/** A tenant's usage by day, and the quotas that bound it (docs/adr/0053). */
@Controller('v1')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Get('usage')
  @ApiOperation({
    operationId: 'getUsage',
    summary:
      'What the tenant stores now (documents, bytes, chunks, knowledge bases) and what it did each UTC day (searches, context calls, reranks, uploads), in all or in one knowledge base; tenant admins only',
    parameters: queryParameters(usageQuerySchema),
    response: usageViewSchema,
    errors: [400, 403],
  })
  @Authenticated({ access: true, rateLimit: 'read' })
  async get(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Query() query: unknown,
  ): Promise<UsageView> {
    return this.usage.usage(caller.tenantId, access, parseBody(usageQuerySchema, query));
  }

  @Get('quotas')
  @ApiOperation({
    operationId: 'getQuotas',
    summary:
      'The limits in force for the tenant and its knowledge bases (documents, bytes, knowledge bases, searches per day); null is none',
    response: quotasViewSchema,
  })
  @Authenticated({ access: true })
  async quotas(@CurrentCaller() caller: Caller): Promise<QuotasView> {
    return this.usage.quotas(caller.tenantId);
  }

  @Put('quotas')
  @ApiOperation({
    operationId: 'setQuotas',
    summary:
      'Set the tenant\u2019s limits, or a knowledge base\u2019s (knowledgeBaseId); null removes one, fields left out are kept; never looser than the deployment\u2019s; tenant admins only',
    body: setQuotasSchema,
    response: quotasViewSchema,
    errors: [400, 403],
  })
  @Authenticated({ access: true, rateLimit: 'admin' })
  async set(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Body() body: unknown,
  ): Promise<QuotasView> {
    return this.usage.setQuotas(caller.tenantId, access, parseBody(setQuotasSchema, body));
  }
}
