import {
  type DocumentFilterableFields,
  type DocumentFilterNode,
  type DocumentStatus,
  matchesDocumentFilter,
  type TenantId,
} from '@kb/contracts';

import { type DocumentRecord, isFinal, STATUS_RANK } from '../documents/document.model';
import type { ListingRead, MembershipDrift } from '../documents/documents.repository';
import {
  type AppliedStatus,
  collapseStatusChanges,
  piiFindingsOf,
  type TenantStatusChange,
} from '../documents/status-changes';
import { clone, type InMemoryDatabase, keyOf } from './in-memory.database';

/**
 * The reads and the status batch of `InMemoryDocumentsRepository` that the SQL one keeps in
 * `document-listing.sql.ts`, `membership-drift.sql.ts` and `document-statuses.sql.ts`.
 */

const sameSet = (a: string[], b: string[]): boolean =>
  a.every((x) => b.includes(x)) && b.every((x) => a.includes(x));

/** A page of `documents` (the tenant's, already restricted to the visible), as `list` reads it. */
export function listPage(
  db: InMemoryDatabase,
  documents: DocumentRecord[],
  {
    limit,
    after,
    knowledgeBaseId,
    filter,
    read,
  }: {
    limit: number;
    after?: { createdAt: string; id: string };
    knowledgeBaseId?: string;
    filter?: DocumentFilterNode;
    read?: ListingRead;
  },
): DocumentRecord[] {
  const afterTime = after ? new Date(after.createdAt).getTime() : undefined;
  const page = documents
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
    db.outbox.push({
      ...clone(read.message),
      key,
      payload: JSON.stringify(envelope),
      id: db.outboxId(),
      trx: 0,
    });
    db.writes.push({ trx: 0, table: 'outbox', op: 'insert', key });
  }
  return page;
}

/** The tenant's documents whose knowledge bases drifted from their explicit ones and tag rules. */
export function driftedMemberships(
  db: InMemoryDatabase,
  tenantId: TenantId,
  documents: DocumentRecord[],
): MembershipDrift[] {
  const rules = [...db.knowledgeBases.values()]
    .filter((kb) => kb.tenantId === tenantId && kb.view.tagRule.anyOf.length > 0)
    .sort((a, b) => (a.view.id < b.view.id ? -1 : 1));
  return documents
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

/** Pipeline status changes, collapsed and applied as the SQL UPDATE does. */
export function applyStatuses(
  db: InMemoryDatabase,
  changes: TenantStatusChange[],
): AppliedStatus[] {
  for (const { tenantId, documentId, version, pii } of piiFindingsOf(changes)) {
    const stored = db.documents.get(keyOf(tenantId, documentId));
    if (stored?.version === version) {
      db.documents.set(keyOf(tenantId, documentId), { ...clone(stored), piiFindings: pii });
    }
  }
  const moved: AppliedStatus[] = [];
  for (const change of collapseStatusChanges(changes)) {
    const stored = db.documents.get(keyOf(change.tenantId, change.documentId));
    const current = stored && clone(stored);
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
    db.documents.set(keyOf(change.tenantId, current.id), {
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
