import {
  type DocumentFilterableFields,
  type DocumentFilterNode,
  type DocumentStatus,
  matchesDocumentFilter,
  type TenantId,
} from '@kb/contracts';

import {
  type DocumentAcl,
  type DocumentRecord,
  isFinal,
  STATUS_RANK,
} from '../documents/document.model';
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
import {
  type AppliedStatus,
  collapseStatusChanges,
  type TenantStatusChange,
} from '../documents/status-changes';
import type { Trx } from '../platform/transaction.runner';
import { clone, type InMemoryDatabase, keyOf } from './in-memory.database';
import { openTrx } from './in-memory-transaction.runner';

const visible = (document: DocumentRecord, visibility: Visibility): boolean =>
  visibility === 'all' || document.principals.some((p) => visibility.includes(p));

const sameSet = (a: string[], b: string[]): boolean =>
  a.every((x) => b.includes(x)) && b.every((x) => a.includes(x));

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

  async list(
    tenantId: TenantId,
    limit: number,
    visibility: Visibility,
    after?: { createdAt: string; id: string },
    knowledgeBaseId?: string,
    filter?: DocumentFilterNode,
    read?: ListingRead,
  ): Promise<DocumentRecord[]> {
    const afterTime = after ? new Date(after.createdAt).getTime() : undefined;
    const page = this.tenantDocuments(tenantId)
      .filter((d) => visible(d, visibility))
      .filter((d) => matchesDocumentFilter(filter, filterableOf(d)))
      .filter((d) => !knowledgeBaseId || d.knowledgeBaseIds.includes(knowledgeBaseId))
      .filter(
        (d) =>
          !after ||
          d.createdAt.getTime() < afterTime! ||
          (d.createdAt.getTime() === afterTime && d.id < after.id),
      )
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
      .slice(0, limit);
    if (read) {
      // As the SQL statement writes it: the served ids in page order, keyed as DocumentAudit keys.
      const ids = page.slice(0, read.served).map((d) => d.id);
      const envelope = JSON.parse(read.message.payload) as { payload: { documentIds: string[] } };
      envelope.payload.documentIds = ids;
      const key = ids.length === 1 ? ids[0]! : read.message.key;
      // A statement of its own (transaction 0), like the SQL one.
      this.db.outbox.push({
        ...clone(read.message),
        key,
        payload: JSON.stringify(envelope),
        id: this.db.outboxId(),
        trx: 0,
      });
      this.db.writes.push({ trx: 0, table: 'outbox', op: 'insert', key });
    }
    return page;
  }

  async deleteOnlyIn(
    trx: Trx,
    tenantId: TenantId,
    knowledgeBaseId: string,
    visibility: Visibility,
  ): Promise<DeletedDocument[]> {
    openTrx(trx);
    const doomed = this.tenantDocuments(tenantId).filter(
      (d) =>
        visible(d, visibility) &&
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

  async driftedMemberships(trx: Trx, tenantId: TenantId): Promise<MembershipDrift[]> {
    openTrx(trx);
    const rules = [...this.db.knowledgeBases.values()]
      .filter((kb) => kb.tenantId === tenantId && kb.view.tagRule.anyOf.length > 0)
      .sort((a, b) => (a.view.id < b.view.id ? -1 : 1));
    return this.tenantDocuments(tenantId)
      .map((d) => ({
        id: d.id,
        inactive: d.inactive,
        tags: d.tags,
        metadata: d.metadata,
        knowledgeBaseIds: d.knowledgeBaseIds,
        explicit: d.explicitKnowledgeBaseIds,
        byRule: rules
          .filter((kb) => kb.view.tagRule.anyOf.some((tag) => d.tags.includes(tag)))
          .map((kb) => kb.view.id),
      }))
      .filter((d) => !sameSet(d.knowledgeBaseIds, [...d.explicit, ...d.byRule]))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async applyStatuses(changes: TenantStatusChange[]): Promise<AppliedStatus[]> {
    const moved: AppliedStatus[] = [];
    for (const change of collapseStatusChanges(changes)) {
      const current = this.read(change.tenantId, change.documentId);
      if (
        !current ||
        current.version !== change.version ||
        isFinal(current.status) ||
        STATUS_RANK[current.status] >= STATUS_RANK[change.status]
      ) {
        continue;
      }
      const reached = Object.entries(change.stageTimes).filter(
        ([status]) => STATUS_RANK[status as DocumentStatus] > STATUS_RANK[current.status],
      );
      this.db.documents.set(keyOf(change.tenantId, current.id), {
        ...current,
        status: change.status,
        failure: change.reason ? { reason: change.reason, detail: change.detail ?? null } : null,
        chunkCount: change.chunkCount ?? current.chunkCount,
        stageTimes: { ...current.stageTimes, ...Object.fromEntries(reached) },
        updatedAt: change.at,
      });
      const { tenantId, documentId, version, status } = change;
      moved.push({ tenantId, documentId, version, status });
    }
    return moved;
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

/** A document as the listing filter sees it. */
const filterableOf = (d: DocumentRecord): DocumentFilterableFields => ({
  documentId: d.id,
  tags: d.tags,
  uploadedAt: d.createdAt.getTime(),
  metadata: d.metadata,
  status: d.status,
  contentType: d.contentType,
  createdAt: d.createdAt.getTime(),
  updatedAt: d.updatedAt.getTime(),
});
