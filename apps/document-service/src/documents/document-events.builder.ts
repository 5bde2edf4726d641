// The payloads this service publishes about documents. Pure: they are written to the outbox by
// `OutboxWriter`, in the transaction of the change they announce.
import {
  type EditableAttributes,
  indexedTags,
  type Pipeline,
  type TopicPayload,
  type Topics,
} from '@kb/contracts';

import type { DocumentAcl, DocumentRecord } from './document.model';

type DocumentEvent = TopicPayload<typeof Topics.document>;
type AuditRecord = TopicPayload<typeof Topics.audit>;

/** The `uploaded` event of a document's current version, as the pipeline receives it. */
export function uploadedEventOf(
  document: DocumentRecord,
  bucket: string,
  pipelines: Pipeline[],
): DocumentEvent {
  return {
    kind: 'uploaded',
    documentId: document.id,
    version: document.version,
    filename: document.filename,
    contentType: document.contentType,
    sizeBytes: document.sizeBytes,
    sha256: document.sha256,
    blob: { bucket, key: document.blobKey },
    title: document.title,
    metadata: document.metadata,
    attributes: {
      knowledgeBaseIds: document.knowledgeBaseIds,
      // An inactive document's chunks carry the marker that keeps them out of search (ADR 25).
      tags: indexedTags(document.tags, document.inactive),
      metadata: document.metadata,
      uploadedAt: document.createdAt.getTime(),
      principals: document.principals,
    },
    pipelines,
    ...(document.attachedTo ? { attachedTo: document.attachedTo } : {}),
  };
}

/**
 * Tags, metadata or knowledge bases changed: the indexes update the chunks in `spaces` in place.
 * `metaVersion` is the document's after the change: indexing ignores an older one (ADR 18).
 */
export const attributesChangedEventOf = (
  documentId: string,
  attributes: EditableAttributes,
  spaces: string[],
  metaVersion: number,
): DocumentEvent => ({ kind: 'attributes_changed', documentId, attributes, spaces, metaVersion });

/** Who may read the document changed: the indexes update its chunks in place. */
export const aclChangedEventOf = (
  document: Pick<DocumentRecord, 'id' | 'principals' | 'metaVersion'>,
): DocumentEvent => ({
  kind: 'acl_changed',
  documentId: document.id,
  principals: document.principals,
  metaVersion: document.metaVersion,
});

/** The document is gone: the indexes drop its chunks. */
export const deletedEventOf = (documentId: string, metaVersion: number): DocumentEvent => ({
  kind: 'deleted',
  documentId,
  metaVersion,
});

/** What document-service holds of these documents' readers (access reconciliation, ADR 18). */
export const accessSnapshotOf = (
  documents: Array<Pick<DocumentRecord, 'id' | 'principals' | 'metaVersion'>>,
): DocumentEvent => ({
  kind: 'access_snapshot',
  documents: documents.map(({ id, principals, metaVersion }) => ({
    documentId: id,
    principals,
    metaVersion,
  })),
});

/** The audit record of an ACL change: who changed it, to what, and when. */
export const aclAuditOf = (
  actor: string,
  documentId: string,
  acl: DocumentAcl,
  principals: string[],
  at: Date,
): AuditRecord => ({
  actor,
  action: 'document_acl_changed',
  detail: JSON.stringify({ acl, principals }),
  documentIds: [documentId],
  chunks: [],
  at: at.toISOString(),
});
