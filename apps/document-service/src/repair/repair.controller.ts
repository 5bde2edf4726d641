import type { Access, Caller } from '@kb/auth';
import { ApiOperation, Authenticated, CurrentAccess, CurrentCaller } from '@kb/http';
import { Controller, HttpCode, Post } from '@nestjs/common';
import { z } from 'zod';

import { type RepairResult, RepairService } from './repair.service';

const repairResultSchema = z.object({
  redriven: z.number().int(),
  tookMs: z.number().int(),
});

/** Operations an operator runs after a restore (docs/adr/0040). */
@Controller('v1/admin')
export class RepairController {
  constructor(private readonly repair: RepairService) {}

  @Post('repair')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'repairDocuments',
    summary:
      'After a restore: send every document of the caller\u2019s tenant through its pipelines again (re-parse from the original, re-embed through the cache, re-index); tenant admins only. Answers when the events are queued',
    response: repairResultSchema,
    errors: [403],
  })
  @Authenticated({ access: true, rateLimit: 'admin' })
  async run(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
  ): Promise<RepairResult> {
    return this.repair.repair(caller.tenantId, access);
  }
}
