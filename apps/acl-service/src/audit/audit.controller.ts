import type { Caller } from '@kb/auth';
import { auditEventSchema } from '@kb/contracts';
import { ApiOperation, Authenticated, CurrentCaller, parseBody, queryParameters } from '@kb/http';
import { Controller, Get, Query } from '@nestjs/common';
import { z } from 'zod';

import { type AuditRecord, AuditRepository } from './audit.repository';

const auditQuerySchema = z.object({
  user: z.string().max(256).optional(),
  document: z.string().max(64).optional(),
  action: z.string().max(64).optional(),
  from: z.iso.datetime().optional(),
  to: z.iso.datetime().optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

const auditRecordSchema = auditEventSchema.extend({ id: z.string(), at: z.string() });

/** The tenant's audit log, for callers granted `read` on `audit` (tenant admins); others get 403. */
@Controller('v1/audit')
export class AuditController {
  constructor(private readonly audit: AuditRepository) {}

  /** Who searched what and what came back, who changed which permission; newest first. */
  @Get()
  @ApiOperation({
    operationId: 'queryAudit',
    summary: 'The tenant\u2019s audit log, newest first (callers with `read` on `audit`)',
    parameters: queryParameters(auditQuerySchema),
    response: z.object({ items: z.array(auditRecordSchema) }),
    errors: [403],
  })
  @Authenticated({ permission: { action: 'read', resource: 'audit' }, rateLimit: 'admin' })
  async query(
    @CurrentCaller() caller: Caller,
    @Query() query: unknown,
  ): Promise<{ items: AuditRecord[] }> {
    const q = parseBody(auditQuerySchema, query);
    return {
      items: await this.audit.query(caller.tenantId, {
        actor: q.user,
        documentId: q.document,
        action: q.action,
        from: q.from ? new Date(q.from) : undefined,
        to: q.to ? new Date(q.to) : undefined,
        limit: q.limit,
      }),
    };
  }
}
