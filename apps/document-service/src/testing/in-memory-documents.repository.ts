import type { DocumentFilterNode, TenantId } from '@kb/contracts';

import type { DocumentAcl, DocumentRecord } from '../documents/document.model';
import {
  type AttributesChange,
  type DeletedDocument,
  DocumentsRepository,
  type ListingRead,
  type MembershipDrift,
  type NewContent,
  type NewDocumentRow,
  type Visibility,
} from '../documents/documents.repository';
import type { AppliedStatus, TenantStatusChange } from '../documents/status-changes';
import type { Trx } from '../platform/transaction.runner';
import { clone, type InMemoryDatabase, keyOf } from './in-memory.database';
import { applyStatuses, driftedMemberships, listPage } from './in-memory-document-queries';
import { openTrx } from './in-memory-transaction.runner';

const visible = (document: DocumentRecord, visibility: Visibility): boolean =>
  visibility === 'all' || document.principals.some((p) => visibility.includes(p));

/** `DocumentsRepository` over `InMemoryDatabase`, with the semantics of the SQL one. */
export class InMemoryDocumentsRepository extends DocumentsRepository {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  // The runner runs one unit of work at a time: there is nothing left to serialize.
  async lockContent(trx: Trx): Promise<void> {
    openTrx(trx);
  }

  async findBySha256(
    tenantId: TenantId,
    sha256: string,
    visibility: Visibility,
  ): Promise<DocumentRecord | undefined> {
    return this.tenantDocuments(tenantId)
      .filter((d) => d.sha256 === sha256 && visible(d, visibility))
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())[0];
  }

  async findByExternalId(
    tenantId: TenantId,
    externalId: string,
  ): Promise<DocumentRecord | undefined> {
    return this.tenantDocuments(tenantId).find((d) => d.externalId === externalId);
  }

  async listByExternalIdPrefix(
    tenantId: TenantId,
    prefix: string,
    visibility: Visibility,
  ): Promise<DocumentRecord[]> {
    return this.tenantDocuments(tenantId)
      .filter((d) => d.externalId?.startsWith(prefix) && visible(d, visibility))
      .sort((a, b) => (a.externalId! < b.externalId! ? -1 : 1));
  }

  async pageByExternalIdPrefix(
    tenantId: TenantId,
    prefix: string,
    visibility: Visibility,
    limit: number,
    after?: string,
  ): Promise<DocumentRecord[]> {
    const bytes = (id: string) => Buffer.from(id, 'utf8');
    return (await this.listByExternalIdPrefix(tenantId, prefix, visibility))
      .sort((a, b) => Buffer.compare(bytes(a.externalId!), bytes(b.externalId!)))
      .filter((d) => after === undefined || Buffer.compare(bytes(d.externalId!), bytes(after)) > 0)
      .slice(0, limit);
  }

  async findById(
    tenantId: TenantId,
    id: string,
    visibility: Visibility,
  ): Promise<DocumentRecord | undefined> {
    const document = this.read(tenantId, id);
    return document && visible(document, visibility) ? document : undefined;
  }

  async deleteOnlyIn(
    trx: Trx,
    tenantId: TenantId,
    knowledgeBaseId: string,
    visibility: Visibility,
    keep: string[] = [],
  ): Promise<DeletedDocument[]> {
    openTrx(trx);
    const doomed = this.tenantDocuments(tenantId).filter(
      (d) =>
        visible(d, visibility) &&
        !keep.includes(d.id) &&
        d.knowledgeBaseIds.length > 0 &&
        d.knowledgeBaseIds.every((id) => id === knowledgeBaseId),
    );
    const deleted: DeletedDocument[] = [];
    for (const document of doomed) {
      const row = await this.delete(trx, tenantId, document.id);
      if (row) deleted.push({ id: document.id, ...row });
    }
    return deleted;
  }

  async lockMembers(
    trx: Trx,
    tenantId: TenantId,
    knowledgeBaseId: string,
    visibility: Visibility,
  ): Promise<DocumentRecord[]> {
    openTrx(trx);
    return this.tenantDocuments(tenantId)
      .filter((d) => visible(d, visibility) && d.knowledgeBaseIds.includes(knowledgeBaseId))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async lockForUpdate(
    trx: Trx,
    tenantId: TenantId,
    id: string,
  ): Promise<DocumentRecord | undefined> {
    openTrx(trx);
    return this.read(tenantId, id);
  }

  async insert(trx: Trx, row: NewDocumentRow): Promise<DocumentRecord> {
    const key = keyOf(row.tenantId, row.id);
    if (this.db.documents.has(key)) throw new Error(`duplicate key: document ${row.id}`);
    const { now, externalId, ...fields } = row;
    if (externalId && this.tenantDocuments(row.tenantId).some((d) => d.externalId === externalId)) {
      throw new Error(`duplicate key: external id ${externalId}`);
    }
    const document: DocumentRecord = {
      ...fields,
      externalId: externalId ?? null,
      inactive: false,
      version: 1,
      status: 'pending',
      failure: null,
      chunkCount: null,
      piiFindings: null,
      stageTimes: { pending: now.toISOString() },
      redrives: 0,
      metaVersion: 0,
      createdAt: now,
      updatedAt: now,
    };
    return this.write(trx, 'insert', document);
  }

  async replaceContent(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    content: NewContent,
  ): Promise<DocumentRecord> {
    const { now, ...fields } = content;
    const current = this.existing(tenantId, id);
    return this.write(trx, 'replaceContent', {
      ...current,
      ...fields,
      version: current.version + 1,
      status: 'pending',
      failure: null,
      chunkCount: null,
      piiFindings: null,
      redrives: 0,
      stageTimes: { pending: now.toISOString() },
      updatedAt: now,
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
    const current = this.existing(tenantId, id);
    return this.write(trx, 'setAcl', {
      ...current,
      acl,
      principals,
      metaVersion: current.metaVersion + 1,
      updatedAt: now,
    });
  }

  async setAttributes(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    change: AttributesChange,
    now: Date,
  ): Promise<DocumentRecord> {
    const current = this.existing(tenantId, id);
    return this.write(trx, 'setAttributes', {
      ...current,
      ...change,
      metaVersion: current.metaVersion + 1,
      updatedAt: now,
    });
  }

  async setMembership(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    knowledgeBaseIds: string[],
    now: Date,
  ): Promise<DocumentRecord> {
    const current = this.existing(tenantId, id);
    return this.write(trx, 'setMembership', {
      ...current,
      knowledgeBaseIds,
      metaVersion: current.metaVersion + 1,
      updatedAt: now,
    });
  }

  async setExpiry(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    expiresAt: Date | null,
  ): Promise<DocumentRecord | undefined> {
    const document = this.read(tenantId, id);
    return document && this.write(trx, 'set_expiry', { ...document, expiresAt });
  }

  async delete(
    trx: Trx,
    tenantId: TenantId,
    id: string,
  ): Promise<{ sha256: string; blobKey: string; metaVersion: number } | undefined> {
    const { id: trxId } = openTrx(trx);
    const current = this.read(tenantId, id);
    if (!current) return undefined;
    this.db.documents.delete(keyOf(tenantId, id));
    this.db.writes.push({ trx: trxId, table: 'documents', op: 'delete', key: id });
    return {
      sha256: current.sha256,
      blobKey: current.blobKey,
      metaVersion: current.metaVersion + 1,
    };
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
    const documents = this.tenantDocuments(tenantId).filter((d) => visible(d, visibility));
    return listPage(this.db, documents, { limit, after, knowledgeBaseId, filter, read });
  }

  async driftedMemberships(trx: Trx, tenantId: TenantId): Promise<MembershipDrift[]> {
    openTrx(trx);
    return driftedMemberships(this.db, tenantId, this.tenantDocuments(tenantId));
  }

  async applyStatuses(changes: TenantStatusChange[]): Promise<AppliedStatus[]> {
    return applyStatuses(this.db, changes);
  }

  async isBlobReferenced(sha256: string, blobKey: string): Promise<boolean> {
    return [...this.db.documents.values()].some(
      (d) => d.sha256 === sha256 && d.blobKey === blobKey,
    );
  }

  private tenantDocuments(tenantId: TenantId): DocumentRecord[] {
    return [...this.db.documents.values()]
      .filter((d) => d.tenantId === tenantId)
      .map((d) => clone(d));
  }

  private read(tenantId: TenantId, id: string): DocumentRecord | undefined {
    const document = this.db.documents.get(keyOf(tenantId, id));
    return document && clone(document);
  }

  private existing(tenantId: TenantId, id: string): DocumentRecord {
    const document = this.read(tenantId, id);
    if (!document) throw new Error(`no document ${id}: the caller locks it first`);
    return document;
  }

  private write(trx: Trx, op: string, document: DocumentRecord): DocumentRecord {
    const { id: trxId } = openTrx(trx);
    this.db.documents.set(keyOf(document.tenantId, document.id), clone(document));
    this.db.writes.push({ trx: trxId, table: 'documents', op, key: document.id });
    return clone(document);
  }
}
