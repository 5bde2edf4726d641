import { randomUUID } from 'node:crypto';

import { toTenantId } from '@kb/contracts';
import type { MemoryBlobStore } from '@kb/testing';

import type { NewDocument } from '../../src/documents/document.model';
import type { DocumentReads } from '../../src/documents/document-reads.service';
import type { DocumentsRepository, Visibility } from '../../src/documents/documents.repository';
import type { DocumentsService } from '../../src/documents/documents.service';
import type { KnowledgeBasesService } from '../../src/knowledge-bases/knowledge-bases.service';
import type { TransactionRunner } from '../../src/platform/transaction.runner';

/** The tenant the conformance suites write to (other tenants are made per test). */
export const tenant = toTenantId('t1');

/** What the suite drives: the services over one `DocumentsRepository`, and its outbox. */
export interface DocumentsConformanceHarness {
  service: {
    documents: DocumentsService;
    documentsRepository: DocumentsRepository;
    transactions: TransactionRunner;
    blobs: MemoryBlobStore;
    reads: DocumentReads;
    knowledgeBases: KnowledgeBasesService;
  };
  /** Every outbox message, in the order written. */
  outbox(): Promise<Array<{ topic: string; key: string; payload: string }>>;
}

/** A caller who can read nothing never gets a duplicate: every insert is a new document. */
export const NOBODY: Visibility = [];

export const newDocument = (overrides: Partial<NewDocument> = {}): NewDocument => ({
  id: randomUUID(),
  tenantId: tenant,
  title: 'Title',
  filename: 'a.md',
  contentType: 'text/markdown',
  sizeBytes: 5,
  sha256: 'a'.repeat(64),
  blobKey: `blobs/sha256/${'a'.repeat(64)}`,
  tags: [],
  knowledgeBaseIds: ['default'],
  ownerId: 'alice',
  acl: { users: [], groups: ['eng'], roles: [], tenant: false },
  metadata: { team: 'x' },
  now: new Date('2026-11-22T10:00:00Z'),
  ...overrides,
});

/** Inserts `doc` with its event, as a caller who reads nothing (so never a duplicate). */
export const insertWithEvent = (h: DocumentsConformanceHarness, doc: NewDocument) =>
  h.service.documents.register(doc, NOBODY);
