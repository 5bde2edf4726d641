import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Access, Action } from '@kb/auth';
import { DEFAULT_CHUNKER, type PipelineDefaults, type TenantId, toTenantId } from '@kb/contracts';
import type { BlobStore } from '@kb/storage';
import { MemoryBlobStore, MemoryIndexGenerations } from '@kb/testing';

import { MailAttachmentLinks } from '../attachments/attachment-links';
import { DocumentAudit } from '../documents/document-audit';
import type { UploadedFile } from '../documents/document-content.storage';
import { DocumentMembershipService } from '../documents/document-membership.service';
import { DocumentReads } from '../documents/document-reads.service';
import type { DocumentsRepository } from '../documents/documents.repository';
import { DocumentsService } from '../documents/documents.service';
import { EditDocument } from '../documents/edit-document';
import { PrecomputedChunksService } from '../documents/precomputed-chunks.service';
import { ReplaceDocumentContent } from '../documents/replace-document-content';
import { UploadDocument } from '../documents/upload-document';
import type { HeldDocuments } from '../holds/legal-holds.repository';
import { LegalHoldsService } from '../holds/legal-holds.service';
import { CollectionsService } from '../knowledge-bases/collections.service';
import { KnowledgeBaseBulkDelete } from '../knowledge-bases/knowledge-base-bulk-delete';
import { KnowledgeBaseDirectoryService } from '../knowledge-bases/knowledge-base-directory.service';
import { KnowledgeBasesService } from '../knowledge-bases/knowledge-bases.service';
import type { ModelCatalog } from '../knowledge-bases/model-catalog.client';
import type { OutboxWake } from '../outbox/outbox.relay';
import { OutboxWriter } from '../outbox/outbox.writer';
import type { KnowledgeBaseDirectory } from '../pipelines/knowledge-base-directory.port';
import type { Clock } from '../platform/tokens';
import type { TransactionRunner } from '../platform/transaction.runner';
import { unlimitedQuotas } from '../usage/usage.service';
import { InMemoryDatabase } from './in-memory.database';
import { InMemoryDocumentStatsRepository } from './in-memory-document-stats.repository';
import { InMemoryDocumentsRepository } from './in-memory-documents.repository';
import { InMemoryKnowledgeBasesRepository } from './in-memory-knowledge-bases.repository';
import { InMemoryLegalHolds, NO_HOLDS } from './in-memory-legal-holds';
import { InMemoryOutboxRepository } from './in-memory-outbox.repository';
import { InMemoryTransactionRunner } from './in-memory-transaction.runner';

export const DEFAULTS: PipelineDefaults = { chunker: DEFAULT_CHUNKER, model: 'all-MiniLM-L6-v2' };

/** embedding-service's answer for the models it serves, as the e2e suite gets it. */
export const servedModels = (dimensions: Record<string, number>): ModelCatalog => ({
  dimensionOf: async (model) => dimensions[model],
});

/** An outbox relay that counts how it was woken: at once (writes) and soon (reads). */
export function countingRelay() {
  const relay = {
    wakes: 0,
    soonWakes: 0,
    wake: () => void (relay.wakes += 1),
    wakeSoon: () => void (relay.soonWakes += 1),
  };
  return relay;
}

/** What `DocumentsService` and its use cases are built from, in a spec or an int-spec. */
export interface DocumentsServiceDeps {
  documentsRepository: DocumentsRepository;
  membership: DocumentMembershipService;
  directory: KnowledgeBaseDirectory;
  transactions: TransactionRunner;
  writer: OutboxWriter;
  relay: OutboxWake;
  blobs: BlobStore;
  clock: Clock;
  audit: DocumentAudit;
  /** Legal holds deletes ask about; none by default. */
  holds?: HeldDocuments;
}

/** `DocumentsService` with its use cases (`UploadDocument`, …), wired as DocumentsModule does. */
export function documentsServiceOver(deps: DocumentsServiceDeps) {
  const {
    documentsRepository: repository,
    membership,
    transactions,
    relay,
    blobs,
    clock,
    audit,
  } = deps;
  const replacer = new ReplaceDocumentContent(
    repository,
    membership,
    transactions,
    relay,
    blobs,
    clock,
    audit,
  );
  const editor = new EditDocument(
    repository,
    membership,
    deps.directory,
    transactions,
    relay,
    clock,
    audit,
  );
  const uploads = new UploadDocument(
    repository,
    membership,
    deps.directory,
    transactions,
    relay,
    blobs,
    clock,
    audit,
    replacer,
    editor,
    unlimitedQuotas,
  );
  const documents = new DocumentsService(
    repository,
    transactions,
    deps.writer,
    relay,
    blobs,
    clock,
    audit,
    uploads,
    replacer,
    editor,
    deps.holds ?? NO_HOLDS,
    new MailAttachmentLinks(repository, deps.holds ?? NO_HOLDS, deps.writer, blobs),
  );
  return { uploads, documents };
}

/**
 * document-service's real services over in-memory repositories, outbox and transactions: what
 * unit specs drive. The clock is the spec's (`fixture.now`).
 */
export function documentServiceFixture(
  options: { models?: ModelCatalog; defaults?: PipelineDefaults } = {},
) {
  const defaults = options.defaults ?? DEFAULTS;
  const db = new InMemoryDatabase();
  const transactions = new InMemoryTransactionRunner(db);
  const documentsRepository = new InMemoryDocumentsRepository(db);
  const knowledgeBasesRepository = new InMemoryKnowledgeBasesRepository(db);
  const outbox = new InMemoryOutboxRepository(db);
  const writer = new OutboxWriter(outbox);
  const relay = countingRelay();
  const blobs = new MemoryBlobStore({ bucket: 'kb-documents' });
  const fixture = { now: new Date('2026-11-22T10:00:00Z') };
  const clock = () => fixture.now;
  const models = options.models ?? servedModels({ [defaults.model]: 384 });
  const directory = new KnowledgeBaseDirectoryService(knowledgeBasesRepository, defaults, models);
  const membership = new DocumentMembershipService(documentsRepository, directory, writer, blobs);
  const audit = new DocumentAudit(writer, transactions, clock, relay);
  const holds = new InMemoryLegalHolds(db);
  const { uploads, documents } = documentsServiceOver({
    documentsRepository,
    membership,
    directory,
    transactions,
    writer,
    relay,
    blobs,
    clock,
    audit,
    holds,
  });
  const reads = new DocumentReads(documents, audit);
  const precomputed = new PrecomputedChunksService(
    documents,
    membership,
    directory,
    writer,
    blobs,
    { UPLOAD_TMP_DIR: tmpdir() },
  );
  const knowledgeBases = new KnowledgeBasesService(
    knowledgeBasesRepository,
    transactions,
    membership,
    relay,
    models,
    clock,
    defaults,
    unlimitedQuotas,
  );
  const stats = new InMemoryDocumentStatsRepository(db);
  const generations = new MemoryIndexGenerations();
  const collections = new CollectionsService(
    knowledgeBasesRepository,
    stats,
    audit,
    new KnowledgeBaseBulkDelete(
      knowledgeBasesRepository,
      documentsRepository,
      membership,
      transactions,
      writer,
      relay,
      blobs,
      clock,
      audit,
      generations,
      holds,
    ),
  );
  const legalHolds = new LegalHoldsService(
    holds,
    knowledgeBasesRepository,
    transactions,
    audit,
    relay,
    clock,
  );
  return Object.assign(fixture, {
    generations,
    db,
    transactions,
    audit,
    documentsRepository,
    knowledgeBasesRepository,
    outbox,
    writer,
    relay,
    blobs,
    membership,
    uploads,
    documents,
    reads,
    precomputed,
    knowledgeBases,
    collections,
    holds,
    legalHolds,
  });
}

export type DocumentServiceFixture = ReturnType<typeof documentServiceFixture>;

export const TENANT: TenantId = toTenantId('t1');

/** A caller of `TENANT` with read and write (and delete) on documents, unless told otherwise. */
export function newAccess(overrides: Partial<Access> = {}): Access {
  const userId = overrides.userId ?? 'alice';
  return {
    tenantId: TENANT,
    userId,
    principals: [`u:${userId}`],
    documentActions: new Set<Action>(['read', 'write', 'delete']),
    isAdmin: false,
    ...overrides,
  };
}

/**
 * Upload files spooled to a temporary directory, as multer leaves them; `cleanup()` in
 * `afterAll` removes the directory.
 */
export function spool() {
  const dir = mkdtempSync(join(tmpdir(), 'document-service-spec-'));
  let n = 0;
  return {
    file(content: string, name = 'a.md', mimetype = 'text/markdown'): UploadedFile {
      const path = join(dir, `upload-${(n += 1)}`);
      writeFileSync(path, content);
      return { path, originalname: name, mimetype, size: Buffer.byteLength(content) };
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
