import type { Access, Caller } from '@kb/auth';
import { Authenticated, CurrentAccess, CurrentCaller } from '@kb/http';
import { Controller, Get } from '@nestjs/common';

import { type DocumentStats, DocumentStatsService } from './document-stats.service';

@Controller('v1/stats')
export class DocumentStatsController {
  constructor(private readonly stats: DocumentStatsService) {}

  /** Documents and chunks by status, in total and per knowledge base, as far as the caller may read. */
  @Get()
  @Authenticated({ access: true, rateLimit: 'read' })
  async get(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
  ): Promise<DocumentStats> {
    return this.stats.stats(caller.tenantId, access);
  }
}
