import type { AuditEvent } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { type Kysely, sql } from 'kysely';

import type { DB } from '../platform/db.generated';
import { ACL_DB } from '../platform/tokens';

export interface AuditQuery {
  actor?: string | undefined;
  documentId?: string | undefined;
  action?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  limit: number;
}

export interface AuditRecord extends AuditEvent {
  id: string;
}

/** The audit log: searches and what they returned, and permission changes, per tenant. */
@Injectable()
export class AuditRepository {
  constructor(@Inject(ACL_DB) private readonly db: Kysely<DB>) {}

  async insert(tenantId: string, event: AuditEvent): Promise<void> {
    await sql`
      INSERT INTO audit_log (tenant_id, at, actor, action, detail, document_ids, chunks)
      VALUES (${tenantId}, ${event.at}, ${event.actor}, ${event.action}, ${event.detail},
              ${event.documentIds}::text[], ${event.chunks}::text[])`.execute(this.db);
  }

  /** Several records in one statement. */
  async insertMany(records: Array<{ tenantId: string; event: AuditEvent }>): Promise<void> {
    if (records.length === 0) return;
    const rows = JSON.stringify(
      records.map(({ tenantId, event }) => ({
        tenant_id: tenantId,
        at: event.at,
        actor: event.actor,
        action: event.action,
        detail: event.detail,
        document_ids: event.documentIds,
        chunks: event.chunks,
      })),
    );
    await sql`
      INSERT INTO audit_log (tenant_id, at, actor, action, detail, document_ids, chunks)
      SELECT r.tenant_id, r.at, r.actor, r.action, r.detail, r.document_ids, r.chunks
        FROM jsonb_to_recordset(${rows}::jsonb) AS r(tenant_id text, at timestamptz, actor text,
             action text, detail text, document_ids text[], chunks text[])
       ORDER BY r.at`.execute(this.db);
  }

  /** Newest first; every condition optional, all values bound as parameters. */
  async query(tenantId: string, q: AuditQuery): Promise<AuditRecord[]> {
    let query = this.db
      .selectFrom('audit_log')
      .select(['id', 'at', 'actor', 'action', 'detail', 'document_ids', 'chunks'])
      .where('tenant_id', '=', tenantId);
    if (q.actor !== undefined) query = query.where('actor', '=', q.actor);
    // Any text filters (an action no event has matches nothing), so the column's union is widened.
    if (q.action !== undefined)
      query = query.where('action', '=', q.action as AuditEvent['action']);
    if (q.documentId !== undefined) {
      query = query.where('document_ids', '@>', sql<string[]>`ARRAY[${q.documentId}::text]`);
    }
    if (q.from !== undefined) query = query.where('at', '>=', q.from);
    if (q.to !== undefined) query = query.where('at', '<', q.to);
    const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(q.limit).execute();
    return rows.map((row) => ({
      id: String(row.id),
      at: new Date(row.at).toISOString(),
      actor: row.actor,
      action: row.action,
      detail: row.detail,
      documentIds: row.document_ids,
      chunks: row.chunks,
    }));
  }
}
