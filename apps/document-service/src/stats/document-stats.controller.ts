import type { Access, Caller } from '@kb/auth';
import { ApiOperation, Authenticated, CurrentAccess, CurrentCaller } from '@kb/http';
import { Controller, Get } from '@nestjs/common';

import { documentStatsSchema } from './document-stats.model';
import { type DocumentStats, DocumentStatsService } from './document-stats.service';

@Controller('v1/stats')
export class DocumentStatsController {
  constructor(private readonly stats: DocumentStatsService) {}

  /** Documents and chunks by status, in total and per knowledge base, as far as the caller may read. */
  @Get()
  @ApiOperation({
    operationId: 'getStats',
    summary: 'Documents and chunks by status, in total and per knowledge base (readable ones)',
    response: documentStatsSchema,
  })
  @Authenticated({ access: true, rateLimit: 'read' })
  async get(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
  ): Promise<DocumentStats> {
    return this.stats.stats(caller.tenantId, access);
  }
}
