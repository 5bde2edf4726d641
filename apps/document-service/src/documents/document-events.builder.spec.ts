import {
  auditEventSchema,
  DEFAULT_CHUNKER,
  documentEventSchema,
  INACTIVE_TAG,
  pipelineOf,
  Topics,
  toTenantId,
} from '@kb/contracts';

import type { DocumentRecord } from './document.model';
import {
  accessSnapshotOf,
  aclAuditOf,
  aclChangedEventOf,
  attributesChangedEventOf,
  deletedEventOf,
  uploadedEventOf,
} from './document-events.builder';

const id = '6f1c0b8e-3c51-4c8f-9a8e-0d8a4b1f2e3d';
const sha256 = 'a'.repeat(64);
const createdAt = new Date('2026-11-22T10:00:00Z');

const record = (overrides: Partial<DocumentRecord> = {}): DocumentRecord => ({
  id,
  tenantId: toTenantId('t1'),
  title: 'Handbook',
  filename: 'handbook.md',
  contentType: 'text/markdown',
  sizeBytes: 42,
  sha256,
  blobKey: `blobs/sha256/${sha256}`,
  version: 3,
  status: 'pending',
  failure: null,
  chunkCount: null,
  metadata: { team: 'ops' },
  tags: ['runbook'],
  knowledgeBaseIds: ['default', 'ops'],
  explicitKnowledgeBaseIds: ['default'],
  ownerId: 'alice',
  acl: { users: ['bob'], groups: [], roles: [], tenant: false },
  principals: ['u:alice', 'u:bob'],
  stageTimes: { pending: createdAt.toISOString() },
  redrives: 0,
  metaVersion: 4,
  externalId: null,
  inactive: false,
  createdAt,
  updatedAt: new Date('2026-11-23T10:00:00Z'),
  ...overrides,
});

describe('document events', () => {
  it("gives an inactive document's chunks the marker that keeps them out of search", () => {
    const pipelines = [
      {
        ...pipelineOf('t1', DEFAULT_CHUNKER, 'm', { chunker: DEFAULT_CHUNKER, model: 'm' }),
        knowledgeBaseIds: ['default'],
      },
    ];
    const inactive = uploadedEventOf(record({ inactive: true }), 'kb-documents', pipelines);
    expect(inactive.kind === 'uploaded' && inactive.attributes.tags).toEqual([
      'runbook',
      INACTIVE_TAG,
    ]);
    const active = uploadedEventOf(record(), 'kb-documents', pipelines);
    expect(active.kind === 'uploaded' && active.attributes.tags).toEqual(['runbook']);
  });

  it('builds the uploaded event of the current version from the stored document', () => {
    const pipelines = [
      {
        ...pipelineOf('t1', DEFAULT_CHUNKER, 'm', { chunker: DEFAULT_CHUNKER, model: 'm' }),
        knowledgeBaseIds: ['default', 'ops'],
      },
    ];
    const event = uploadedEventOf(record(), 'kb-documents', pipelines);
    expect(event).toEqual({
      kind: 'uploaded',
      documentId: id,
      version: 3,
      filename: 'handbook.md',
      contentType: 'text/markdown',
      sizeBytes: 42,
      sha256,
      blob: { bucket: 'kb-documents', key: `blobs/sha256/${sha256}` },
      title: 'Handbook',
      metadata: { team: 'ops' },
      attributes: {
        knowledgeBaseIds: ['default', 'ops'],
        tags: ['runbook'],
        metadata: { team: 'ops' },
        // When the document was first uploaded, not this version (filters by upload date).
        uploadedAt: createdAt.getTime(),
        principals: ['u:alice', 'u:bob'],
      },
      pipelines,
    });
    expect(documentEventSchema.parse(event)).toEqual(event);
  });

  it('names the spaces an attribute change keeps the document in', () => {
    const attributes = { knowledgeBaseIds: ['default'], tags: [], metadata: {} };
    const event = attributesChangedEventOf(id, attributes, ['t1'], 5);
    expect(event).toEqual({
      kind: 'attributes_changed',
      documentId: id,
      attributes,
      spaces: ['t1'],
      metaVersion: 5,
    });
    expect(documentEventSchema.parse(event)).toEqual(event);
  });

  it('announces an ACL change and a delete by document id, with the meta version', () => {
    const acl = aclChangedEventOf(record());
    expect(acl).toEqual({
      kind: 'acl_changed',
      documentId: id,
      principals: ['u:alice', 'u:bob'],
      metaVersion: 4,
    });
    expect(deletedEventOf(id, 5)).toEqual({ kind: 'deleted', documentId: id, metaVersion: 5 });
    const snapshot = accessSnapshotOf([record()]);
    expect(snapshot).toEqual({
      kind: 'access_snapshot',
      documents: [{ documentId: id, principals: ['u:alice', 'u:bob'], metaVersion: 4 }],
    });
    for (const event of [acl, deletedEventOf(id, 5), snapshot]) {
      expect(documentEventSchema.parse(event)).toEqual(event);
    }
  });

  it('still reads events written before meta versions (applied as the newest)', () => {
    const old = { kind: 'acl_changed', documentId: id, principals: ['u:alice'] };
    expect(documentEventSchema.parse(old)).toEqual(old);
  });

  it('audits an ACL change with who, what and when', () => {
    const acl = { users: ['bob'], groups: ['eng'], roles: [], tenant: false };
    const at = new Date('2026-11-24T08:30:00Z');
    const audit = aclAuditOf('alice', id, acl, ['g:eng', 'u:alice', 'u:bob'], at);
    expect(audit).toEqual({
      actor: 'alice',
      action: 'document_acl_changed',
      detail: JSON.stringify({ acl, principals: ['g:eng', 'u:alice', 'u:bob'] }),
      documentIds: [id],
      chunks: [],
      at: '2026-11-24T08:30:00.000Z',
    });
    expect(auditEventSchema.parse(audit)).toEqual(audit);
    expect(Topics.audit).toBe('kb.audit.v1');
  });
});
