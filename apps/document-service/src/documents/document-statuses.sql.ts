import { type DocumentStatus, toTenantId } from '@kb/contracts';
import { type Kysely, type RawBuilder, sql } from 'kysely';

import type { DocumentDatabase } from '../platform/db.types';
import { FINAL_STATUSES, STATUS_RANK } from './document.model';
import {
  type AppliedStatus,
  collapseStatusChanges,
  piiFindingsOf,
  type TenantStatusChange,
} from './status-changes';

/** Pipeline status changes, a consumed batch in one UPDATE, for `SqlDocumentsRepository`. */
export async function applyStatuses(
  db: Kysely<DocumentDatabase>,
  changes: TenantStatusChange[],
): Promise<AppliedStatus[]> {
  const findings = piiFindingsOf(changes);
  if (findings.length > 0) {
    // On the version they were found in; a newer version has none of its own until parsed.
    await sql`
      UPDATE documents d SET pii_findings = f.pii
        FROM jsonb_to_recordset(${JSON.stringify(findings)}::jsonb)
             AS f("tenantId" text, "documentId" uuid, version integer, pii jsonb)
       WHERE d.tenant_id = f."tenantId" AND d.id = f."documentId" AND d.version = f.version`.execute(
      db,
    );
  }
  const collapsed = collapseStatusChanges(changes);
  if (collapsed.length === 0) return [];
  const rows = collapsed.map((c) => ({
    tenant_id: c.tenantId,
    id: c.documentId,
    version: c.version,
    status: c.status,
    reason: c.reason ?? null,
    detail: c.detail ?? null,
    chunk_count: c.chunkCount ?? null,
    stage_times: c.stageTimes,
    at: c.at.toISOString(),
  }));
  // A stage the row already passed is not recorded again, as one change at a time would not.
  const { rows: moved } = await sql<{
    tenant_id: string;
    id: string;
    version: number;
    status: DocumentStatus;
  }>`
    UPDATE documents d
       SET status = c.status,
           failure_reason = c.reason,
           failure_detail = c.detail,
           chunk_count = COALESCE(c.chunk_count, d.chunk_count),
           stage_times = d.stage_times || (
             SELECT COALESCE(jsonb_object_agg(s.key, s.value), '{}'::jsonb)
               FROM jsonb_each(c.stage_times) s
              WHERE ${rankOf(sql.ref('s.key'))} > ${rankOf(sql.ref('d.status'))}),
           updated_at = c.at
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS c(
             tenant_id text, id uuid, version integer, status text, reason text, detail text,
             chunk_count integer, stage_times jsonb, at timestamptz)
     WHERE d.tenant_id = c.tenant_id AND d.id = c.id AND d.version = c.version
       AND d.status NOT IN (${sql.join(FINAL_STATUSES)})
       AND ${rankOf(sql.ref('d.status'))} < ${rankOf(sql.ref('c.status'))}
    RETURNING d.tenant_id, d.id, d.version, d.status`.execute(db);
  return moved.map((row) => ({
    tenantId: toTenantId(row.tenant_id),
    documentId: row.id,
    version: row.version,
    status: row.status,
  }));
}

/** `STATUS_RANK` of a status in SQL: `(CASE <status> WHEN 'pending' THEN 0 … END)`. */
function rankOf(status: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`(CASE ${status} ${sql.join(
    Object.entries(STATUS_RANK).map(
      ([name, rank]) => sql`WHEN ${sql.lit(name)} THEN ${sql.lit(rank)}`,
    ),
    sql` `,
  )} END)`;
}
