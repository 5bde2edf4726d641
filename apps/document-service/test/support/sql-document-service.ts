import { MemoryBlobStore, MemoryIndexGenerations } from '@kb/testing';
import type { Kysely } from 'kysely';

import { MailAttachmentLinks } from '../../src/attachments/attachment-links';
import type { DocumentConfig } from '../../src/config/document.config';
import { DocumentAudit } from '../../src/documents/document-audit';
import { DocumentMembershipService } from '../../src/documents/document-membership.service';
import { DocumentReads } from '../../src/documents/document-reads.service';
import { SqlDocumentsRepository } from '../../src/documents/documents-sql.repository';
import { ErasuresRepository } from '../../src/erasures/erasures.repository';
import { ErasuresService } from '../../src/erasures/erasures.service';
import { LegalHoldsService } from '../../src/holds/legal-holds.service';
import { SqlLegalHoldsRepository } from '../../src/holds/legal-holds-sql.repository';
import { CollectionsService } from '../../src/knowledge-bases/collections.service';
import { KnowledgeBaseBulkDelete } from '../../src/knowledge-bases/knowledge-base-bulk-delete';
import { KnowledgeBaseDirectoryService } from '../../src/knowledge-bases/knowledge-base-directory.service';
import { KnowledgeBasesService } from '../../src/knowledge-bases/knowledge-bases.service';
import { SqlKnowledgeBasesRepository } from '../../src/knowledge-bases/knowledge-bases-sql.repository';
import { SqlOutboxRepository } from '../../src/outbox/outbox.repository';
import { OutboxWriter } from '../../src/outbox/outbox.writer';
import { pipelineDefaultsOf } from '../../src/pipelines/pipeline-defaults.provider';
import type { DocumentDatabase } from '../../src/platform/db.types';
import { SqlTransactionRunner } from '../../src/platform/transaction.runner';
import { AccessReconciler } from '../../src/reconciliation/access.reconciler';
import { Reconciler } from '../../src/reconciliation/reconciler.service';
import { ReconciliationRepository } from '../../src/reconciliation/reconciliation.repository';
import { BulkDeletion } from '../../src/retention/bulk-deletion';
import { RetentionRepository } from '../../src/retention/retention.repository';
import { RetentionService } from '../../src/retention/retention.service';
import { SqlDocumentStatsRepository } from '../../src/stats/document-stats-sql.repository';
import {
  countingRelay,
  documentsServiceOver,
  servedModels,
} from '../../src/testing/document-service.fixture';
import { unlimitedQuotas } from '../../src/usage/usage.service';

/**
 * document-service's services over the SQL repositories of `db`, as app.module wires them, with
 * an in-memory blob store, the test's clock and a relay that only counts its wake-ups.
 */
export function sqlDocumentService(
  db: Kysely<DocumentDatabase>,
  clock: () => Date,
  config: Pick<DocumentConfig, 'STALLED_AFTER_MS' | 'RECONCILE_MAX_REDRIVES'> = {
    STALLED_AFTER_MS: 15 * 60_000,
    RECONCILE_MAX_REDRIVES: 3,
  },
) {
  const defaults = pipelineDefaultsOf({
    CHUNK_SIZE: 1000,
    CHUNK_OVERLAP: 150,
    EMBEDDING_MODEL: 'all-MiniLM-L6-v2',
  });
  const transactions = new SqlTransactionRunner(db);
  const documentsRepository = new SqlDocumentsRepository(db);
  const knowledgeBasesRepository = new SqlKnowledgeBasesRepository(db);
  const writer = new OutboxWriter(new SqlOutboxRepository(db));
  const relay = countingRelay();
  const blobs = new MemoryBlobStore({ bucket: 'kb-documents' });
  const reconcilerWith = (config: ConstructorParameters<typeof Reconciler>[5]) =>
    new Reconciler(transactions, new ReconciliationRepository(), membership, relay, clock, config);
  const accessReconcilerWith = (config: ConstructorParameters<typeof AccessReconciler>[5]) =>
    new AccessReconciler(
      transactions,
      new ReconciliationRepository(),
      writer,
      relay,
      clock,
      config,
    );
  // Nothing here asks a model's dimension: a knowledge base stores its own.
  const directory = new KnowledgeBaseDirectoryService(knowledgeBasesRepository, defaults, {
    dimensionOf: async () => undefined,
  });
  const membership = new DocumentMembershipService(documentsRepository, directory, writer, blobs);
  const audit = new DocumentAudit(writer, transactions, clock, relay);
  const generations = new MemoryIndexGenerations();
  const holds = new SqlLegalHoldsRepository(db);
  const links = new MailAttachmentLinks(documentsRepository, holds, writer, blobs);
  const deletion = new BulkDeletion(
    documentsRepository,
    writer,
    audit,
    relay,
    blobs,
    generations,
    links,
  );
  const { documents, uploads } = documentsServiceOver({
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
  return {
    defaults,
    generations,
    collections: new CollectionsService(
      knowledgeBasesRepository,
      new SqlDocumentStatsRepository(db),
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
    ),
    holds,
    legalHolds: new LegalHoldsService(
      holds,
      knowledgeBasesRepository,
      transactions,
      audit,
      relay,
      clock,
    ),
    retention: new RetentionService(
      new RetentionRepository(db),
      knowledgeBasesRepository,
      holds,
      transactions,
      deletion,
      clock,
    ),
    erasures: new ErasuresService(
      new ErasuresRepository(db),
      holds,
      transactions,
      deletion,
      audit,
      relay,
      clock,
    ),
    transactions,
    documentsRepository,
    relay,
    blobs,
    documents,
    uploads,
    membership,
    writer,
    reads: new DocumentReads(documents, audit),
    knowledgeBases: new KnowledgeBasesService(
      knowledgeBasesRepository,
      transactions,
      membership,
      relay,
      // embedding-service's answer, as the e2e suite gets it from the real one.
      servedModels({ 'all-MiniLM-L6-v2': 384 }),
      clock,
      defaults,
      unlimitedQuotas,
    ),
    accessReconciler: accessReconcilerWith({
      ACCESS_RECONCILE_INTERVAL_MS: 60_000,
      RECONCILE_FULL_INTERVAL_MS: 600_000,
      ACCESS_RECONCILE_RATE: 0,
    }),
    /** Another replica's access reconciler, configured as `config` says. */
    accessReconcilerWith,
    reconciler: reconcilerWith({
      RECONCILE_INTERVAL_MS: 0,
      RECONCILE_FULL_INTERVAL_MS: 0,
      ...config,
    }),
    /** Another replica's reconciler, configured as `config` says. */
    reconcilerWith,
  };
}
