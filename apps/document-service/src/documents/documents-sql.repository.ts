import {
  type DocumentFilterNode,
  type DocumentMetadata,
  type DocumentStatus,
  type TenantId,
  toTenantId,
} from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import {
  type Kysely,
  type RawBuilder,
  type SelectQueryBuilder,
  sql,
  type UpdateObject,
} from 'kysely';

import type { DocumentDatabase } from '../platform/db.types';
import { DB } from '../platform/tokens';
import { sqlOf, type Trx } from '../platform/transaction.runner';
import {
  type DocumentAcl,
  type DocumentRecord,
  FINAL_STATUSES,
  STATUS_RANK,
} from './document.model';
import { documentFilterSql } from './document-filter.sql';
import { toRecord } from './document-row.mapper';
import {
  type AttributesChange,
  type DeletedDocument,
  DocumentsRepository,
  type ListingRead,
  type MembershipDrift,
  type NewContent,
  type NewDocumentRow,
  type Visibility,
} from './documents.repository';
import {
  type AppliedStatus,
  collapseStatusChanges,
  type TenantStatusChange,
} from './status-changes';

/** The only SQL on `documents` (the drift query also reads the tag rules of `knowledge_bases`). */
@Injectable()
export class SqlDocumentsRepository extends DocumentsRepository {
  constructor(@Inject(DB) private readonly db: Kysely<DocumentDatabase>) {
    super();
  }

  async lockContent(trx: Trx, tenantId: TenantId, sha256: string): Promise<void> {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${tenantId}:${sha256}`}, 0))`.execute(
      sqlOf(trx),
    );
  }

  async findBySha256(
    tenantId: TenantId,
    sha256: string,
    visibility: Visibility,
    trx?: Trx,
  ): Promise<DocumentRecord | undefined> {
    const row = await (trx ? sqlOf(trx) : this.db)
      .selectFrom('documents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('sha256', '=', sha256)
      .$call(visibleTo(visibility))
      .orderBy('created_at')
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async findByExternalId(
    tenantId: TenantId,
    externalId: string,
    trx?: Trx,
  ): Promise<DocumentRecord | undefined> {
    const row = await (trx ? sqlOf(trx) : this.db)
      .selectFrom('documents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('external_id', '=', externalId)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async listByExternalIdPrefix(
    tenantId: TenantId,
    prefix: string,
    visibility: Visibility,
  ): Promise<DocumentRecord[]> {
    const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const rows = await this.db
      .selectFrom('documents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where(sql<boolean>`external_id LIKE ${pattern}`)
      .$call(visibleTo(visibility))
      .orderBy('external_id')
      .execute();
    return rows.map(toRecord);
  }

  async pageByExternalIdPrefix(
    tenantId: TenantId,
    prefix: string,
    visibility: Visibility,
    limit: number,
    after?: string,
  ): Promise<DocumentRecord[]> {
    const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    let query = this.db
      .selectFrom('documents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where(sql<boolean>`external_id LIKE ${pattern}`)
      .$call(visibleTo(visibility))
      // Byte order: the cursor compares as the page is sorted, whatever the database's collation.
      .orderBy(sql`external_id COLLATE "C"`)
      .limit(limit);
    if (after !== undefined) {
      query = query.where(sql<boolean>`external_id COLLATE "C" > ${after}`);
    }
    return (await query.execute()).map(toRecord);
  }

  async findById(
    tenantId: TenantId,
    id: string,
    visibility: Visibility,
  ): Promise<DocumentRecord | undefined> {
    const row = await this.db
      .selectFrom('documents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .$call(visibleTo(visibility))
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async list(
    tenantId: TenantId,
    limit: number,
    visibility: Visibility,
    after?: { createdAt: string; id: string },
    knowledgeBaseId?: string,
    filter?: DocumentFilterNode,
    read?: ListingRead,
  ): Promise<DocumentRecord[]> {
    let query = this.db
      .selectFrom('documents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .$call(visibleTo(visibility))
      .where(documentFilterSql(filter))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit);
    if (knowledgeBaseId) {
      query = query.where(sql<boolean>`knowledge_base_ids @> ARRAY[${knowledgeBaseId}]::text[]`);
    }
    if (after) {
      query = query.where((eb) =>
        eb.or([
          eb('created_at', '<', new Date(after.createdAt)),
          eb.and([eb('created_at', '=', new Date(after.createdAt)), eb('id', '<', after.id)]),
        ]),
      );
    }
    if (!read) return (await query.execute()).map(toRecord);
    // The page and its audit record in one statement: a data-modifying CTE runs whether or not
    // the outer query reads it, and in the statement's own implicit transaction.
    const { message, served } = read;
    const rows = await this.db
      .with('page', () => query)
      .with('served', (db) =>
        db
          .selectFrom('page')
          .select(['id', 'created_at'])
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(served),
      )
      .with('audit', (db) =>
        db
          .insertInto('outbox')
          .columns(['topic', 'message_key', 'payload', 'headers'])
          .expression(
            db.selectFrom('served').select([
              sql<string>`${message.topic}::text`.as('topic'),
              sql<string>`CASE WHEN count(*) = 1 THEN min(id::text) ELSE ${message.key}::text END`.as(
                'message_key',
              ),
              sql<string>`jsonb_set(${message.payload}::jsonb, '{payload,documentIds}',
                  coalesce(jsonb_agg(id ORDER BY created_at DESC, id DESC), '[]'::jsonb))::text`.as(
                'payload',
              ),
              sql<string>`${JSON.stringify(message.headers)}::jsonb`.as('headers'),
            ]),
          )
          .returning('id'),
      )
      .selectFrom('page')
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map(toRecord);
  }

  async deleteOnlyIn(
    trx: Trx,
    tenantId: TenantId,
    knowledgeBaseId: string,
    visibility: Visibility,
  ): Promise<DeletedDocument[]> {
    const only = sql.val([knowledgeBaseId]);
    let query = sqlOf(trx)
      .deleteFrom('documents')
      .where('tenant_id', '=', tenantId)
      .where(sql<boolean>`knowledge_base_ids @> ${only}::text[]`)
      .where(sql<boolean>`knowledge_base_ids <@ ${only}::text[]`);
    if (visibility !== 'all') {
      query = query.where(sql<boolean>`principals && ${sql.val(visibility)}::text[]`);
    }
    const rows = await query.returning(['id', 'sha256', 'blob_key', 'meta_version']).execute();
    return rows.map((row) => ({
      id: row.id,
      sha256: row.sha256,
      blobKey: row.blob_key,
      metaVersion: row.meta_version + 1,
    }));
  }

  async lockMembers(
    trx: Trx,
    tenantId: TenantId,
    knowledgeBaseId: string,
    visibility: Visibility,
  ): Promise<DocumentRecord[]> {
    const rows = await sqlOf(trx)
      .selectFrom('documents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where(sql<boolean>`knowledge_base_ids @> ARRAY[${knowledgeBaseId}]::text[]`)
      .$call(visibleTo(visibility))
      .orderBy('id')
      .forUpdate()
      .execute();
    return rows.map(toRecord);
  }

  async lockForUpdate(
    trx: Trx,
    tenantId: TenantId,
    id: string,
  ): Promise<DocumentRecord | undefined> {
    const row = await sqlOf(trx)
      .selectFrom('documents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async insert(trx: Trx, row: NewDocumentRow): Promise<DocumentRecord> {
    const inserted = await sqlOf(trx)
      .insertInto('documents')
      .values({
        id: row.id,
        tenant_id: row.tenantId,
        title: row.title,
        filename: row.filename,
        content_type: row.contentType,
        size_bytes: row.sizeBytes,
        sha256: row.sha256,
        blob_key: row.blobKey,
        version: 1,
        status: 'pending',
        metadata: JSON.stringify(row.metadata),
        tags: row.tags,
        knowledge_base_ids: row.knowledgeBaseIds,
        explicit_knowledge_base_ids: row.explicitKnowledgeBaseIds,
        owner_id: row.ownerId,
        acl: JSON.stringify(row.acl),
        principals: row.principals,
        external_id: row.externalId ?? null,
        stage_times: JSON.stringify({ pending: row.now.toISOString() }),
        created_at: row.now,
        updated_at: row.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRecord(inserted);
  }

  async replaceContent(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    content: NewContent,
  ): Promise<DocumentRecord> {
    return this.update(trx, tenantId, id, {
      version: sql<number>`version + 1`,
      status: 'pending',
      failure_reason: null,
      failure_detail: null,
      chunk_count: null,
      redrives: 0,
      filename: content.filename,
      content_type: content.contentType,
      size_bytes: content.sizeBytes,
      sha256: content.sha256,
      blob_key: content.blobKey,
      stage_times: JSON.stringify({ pending: content.now.toISOString() }),
      updated_at: content.now,
    });
  }

  async setAcl(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    acl: DocumentAcl,
    principals: string[],
    now: Date,
  ): Promise<DocumentRecord> {
    return this.update(trx, tenantId, id, {
      acl: JSON.stringify(acl),
      principals,
      meta_version: nextMetaVersion,
      updated_at: now,
    });
  }

  async setAttributes(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    change: AttributesChange,
    now: Date,
  ): Promise<DocumentRecord> {
    return this.update(trx, tenantId, id, {
      inactive: change.inactive,
      tags: change.tags,
      metadata: JSON.stringify(change.metadata),
      knowledge_base_ids: change.knowledgeBaseIds,
      explicit_knowledge_base_ids: change.explicitKnowledgeBaseIds,
      meta_version: nextMetaVersion,
      updated_at: now,
    });
  }

  async setMembership(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    knowledgeBaseIds: string[],
    now: Date,
  ): Promise<DocumentRecord> {
    return this.update(trx, tenantId, id, {
      knowledge_base_ids: knowledgeBaseIds,
      meta_version: nextMetaVersion,
      updated_at: now,
    });
  }

  /** One document the caller locked, changed as `values` says. */
  private async update(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    values: UpdateObject<DocumentDatabase, 'documents'>,
  ): Promise<DocumentRecord> {
    const row = await sqlOf(trx)
      .updateTable('documents')
      .set(values)
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRecord(row);
  }

  async delete(
    trx: Trx,
    tenantId: TenantId,
    id: string,
  ): Promise<Omit<DeletedDocument, 'id'> | undefined> {
    const row = await sqlOf(trx)
      .deleteFrom('documents')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .returning(['sha256', 'blob_key', 'meta_version'])
      .executeTakeFirst();
    // The delete is the document's last change: its event carries the version after it.
    return row
      ? { sha256: row.sha256, blobKey: row.blob_key, metaVersion: row.meta_version + 1 }
      : undefined;
  }

  async driftedMemberships(trx: Trx, tenantId: TenantId): Promise<MembershipDrift[]> {
    const drifted = await sql<{
      id: string;
      inactive: boolean;
      tags: string[];
      metadata: DocumentMetadata;
      knowledge_base_ids: string[];
      explicit: string[];
      by_rule: string[];
    }>`${membershipDrift(sql<boolean>`d.tenant_id = ${tenantId}`)} ORDER BY id`.execute(sqlOf(trx));
    return drifted.rows.map((row) => ({
      id: row.id,
      inactive: row.inactive,
      tags: row.tags,
      metadata: row.metadata,
      knowledgeBaseIds: row.knowledge_base_ids,
      explicit: row.explicit,
      byRule: row.by_rule,
    }));
  }

  async applyStatuses(changes: TenantStatusChange[]): Promise<AppliedStatus[]> {
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
      RETURNING d.tenant_id, d.id, d.version, d.status`.execute(this.db);
    return moved.map((row) => ({
      tenantId: toTenantId(row.tenant_id),
      documentId: row.id,
      version: row.version,
      status: row.status,
    }));
  }

  async isBlobReferenced(sha256: string, blobKey: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('documents')
      .select('id')
      .where('sha256', '=', sha256)
      .where('blob_key', '=', blobKey)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }
}

/** An ACL, attribute or membership change moves the document's meta version on (ADR 18). */
const nextMetaVersion = sql<number>`meta_version + 1`;

/** `STATUS_RANK` of a status in SQL: `(CASE <status> WHEN 'pending' THEN 0 … END)`. */
function rankOf(status: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`(CASE ${status} ${sql.join(
    Object.entries(STATUS_RANK).map(
      ([name, rank]) => sql`WHEN ${sql.lit(name)} THEN ${sql.lit(rank)}`,
    ),
    sql` `,
  )} END)`;
}

/**
 * The documents in `scope` whose knowledge bases differ from their explicit ones plus those whose
 * tag rule matches their tags (`by_rule`, by id). Reconciliation uses it across tenants.
 */
export function membershipDrift(scope: RawBuilder<boolean>): RawBuilder<unknown> {
  return sql`
    WITH expected AS (
      SELECT d.tenant_id, d.id, d.inactive, d.tags, d.metadata, d.knowledge_base_ids,
             d.explicit_knowledge_base_ids AS explicit,
             ARRAY(SELECT k.id FROM knowledge_bases k
                   WHERE k.tenant_id = d.tenant_id AND k.tag_rule && d.tags
                   ORDER BY k.id) AS by_rule
      FROM documents d
      WHERE ${scope}
    )
    SELECT tenant_id, id, inactive, tags, metadata, knowledge_base_ids, explicit, by_rule FROM expected
    WHERE NOT (knowledge_base_ids @> (explicit || by_rule)
               AND (explicit || by_rule) @> knowledge_base_ids)`;
}

/** Restricts a query to the documents `visibility` allows. */
function visibleTo(visibility: Visibility) {
  return <Q extends SelectQueryBuilder<DocumentDatabase, 'documents', object>>(query: Q): Q =>
    visibility === 'all'
      ? query
      : (query.where(sql<boolean>`principals && ${sql.val(visibility)}::text[]`) as Q);
}
