import type { DocumentFilterNode, TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { type Kysely, sql, type UpdateObject } from 'kysely';

import type { DocumentDatabase } from '../platform/db.types';
import { DB } from '../platform/tokens';
import { sqlOf, type Trx } from '../platform/transaction.runner';
import type { DocumentAcl, DocumentRecord } from './document.model';
import { setExpiry } from './document-expiry.sql';
import {
  listByExternalIdPrefix,
  listDocuments,
  pageByExternalIdPrefix,
  visibleTo,
} from './document-listing.sql';
import { toRecord } from './document-row.mapper';
import { applyStatuses } from './document-statuses.sql';
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
import { driftedMemberships } from './membership-drift.sql';
import type { AppliedStatus, TenantStatusChange } from './status-changes';

type DocumentUpdate = UpdateObject<DocumentDatabase, 'documents'>;

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

  listByExternalIdPrefix(
    tenantId: TenantId,
    prefix: string,
    visibility: Visibility,
    trx?: Trx,
  ): Promise<DocumentRecord[]> {
    return listByExternalIdPrefix(trx ? sqlOf(trx) : this.db, tenantId, prefix, visibility);
  }

  pageByExternalIdPrefix(
    tenantId: TenantId,
    prefix: string,
    visibility: Visibility,
    limit: number,
    after?: string,
  ): Promise<DocumentRecord[]> {
    return pageByExternalIdPrefix(this.db, tenantId, prefix, visibility, limit, after);
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

  list(
    tenantId: TenantId,
    limit: number,
    visibility: Visibility,
    after?: { createdAt: string; id: string },
    knowledgeBaseId?: string,
    filter?: DocumentFilterNode,
    read?: ListingRead,
  ): Promise<DocumentRecord[]> {
    return listDocuments(
      this.db,
      tenantId,
      limit,
      visibility,
      after,
      knowledgeBaseId,
      filter,
      read,
    );
  }

  async deleteOnlyIn(
    trx: Trx,
    tenantId: TenantId,
    knowledgeBaseId: string,
    visibility: Visibility,
    keep: string[] = [],
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
    if (keep.length > 0) query = query.where(sql<boolean>`id <> ALL(${sql.val(keep)}::uuid[])`);
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
      pii_findings: null,
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
  private async update(trx: Trx, tenantId: TenantId, id: string, values: DocumentUpdate) {
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

  setExpiry(trx: Trx, tenantId: TenantId, id: string, expiresAt: Date | null) {
    return setExpiry(trx, tenantId, id, expiresAt);
  }

  driftedMemberships(trx: Trx, tenantId: TenantId): Promise<MembershipDrift[]> {
    return driftedMemberships(trx, tenantId);
  }

  applyStatuses(changes: TenantStatusChange[]): Promise<AppliedStatus[]> {
    return applyStatuses(this.db, changes);
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
