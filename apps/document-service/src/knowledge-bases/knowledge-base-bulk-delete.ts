import { randomUUID } from 'node:crypto';

import type { Access } from '@kb/auth';
import { DOCUMENTS_REMOVED_BATCH, type TenantId, Topics } from '@kb/contracts';
import type { IndexGenerations } from '@kb/index-state';
import type { BlobStore } from '@kb/storage';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { requireDocumentAction } from '../access/document-actions';
import { DocumentAudit } from '../documents/document-audit';
import { DocumentMembershipService } from '../documents/document-membership.service';
import {
  type DeletedDocument,
  DocumentsRepository,
  type Visibility,
  visibilityOf,
} from '../documents/documents.repository';
import type { HeldSkip } from '../holds/legal-hold.model';
import { HeldDocuments } from '../holds/legal-holds.repository';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { OutboxWriter } from '../outbox/outbox.writer';
import { DEFAULT_KNOWLEDGE_BASE } from '../pipelines/pipeline.model';
import { forEachConcurrently } from '../platform/for-each-concurrently';
import { BLOB_STORE, CLOCK, type Clock, GENERATIONS } from '../platform/tokens';
import { TransactionRunner, type Trx } from '../platform/transaction.runner';
import { heldField, heldMembers, refuseHeldKnowledgeBase } from './held-members';
import {
  KnowledgeBaseError,
  KnowledgeBaseErrorCode,
  knowledgeBaseNotFound,
} from './knowledge-bases.errors';
import { KnowledgeBasesRepository, requireKnowledgeBase } from './knowledge-bases.repository';

/** What emptying a knowledge base did, as far as the caller may read. */
export interface EmptyResult {
  jobId: string;
  knowledgeBaseId: string;
  status: 'completed';
  /** Documents removed from it: deleted (it was their only one) plus unlinked (they stay elsewhere). */
  deletedCount: number;
  /** Of those, the documents that belonged to other knowledge bases too and stay there. */
  unlinkedCount: number;
  /** Documents its tag rule still holds (they are in other knowledge bases too): retag them. */
  retainedCount: number;
  /** indexing-service drops the deleted documents' chunks when it reads their events. */
  indexRemoval: 'scheduled';
  tookMs: number;
  /** Documents left in it, deleted and unlinked neither, because a legal hold covers them. */
  held?: HeldSkip;
}

export interface DeleteKnowledgeBaseResult {
  id: string;
  cascade: boolean;
  /** Documents deleted with it (`cascade=true`: those it was the only knowledge base of). */
  deletedCount: number;
  /** Documents that stay, in their other knowledge bases. */
  unlinkedCount: number;
  indexRemoval: 'scheduled';
  /** Documents a legal hold kept from the cascade: they left it instead (counted in unlinked). */
  held?: HeldSkip;
}

/** Audit records name at most this many documents each (a Kafka message stays small). */
const AUDIT_BATCH = 1000;

/** Originals deleted from S3 at once after a bulk delete. */
const BLOB_DELETES_AT_ONCE = 8;

/**
 * The two bulk-delete workflows of a knowledge base (docs/adr/0024): emptying it, and deleting it
 * (with its documents when `cascade`). Both delete in one statement and one transaction, then
 * retire cached search results and remove unreferenced originals.
 */
@Injectable()
export class KnowledgeBaseBulkDelete {
  private readonly logger = new Logger(KnowledgeBaseBulkDelete.name);

  constructor(
    private readonly knowledgeBases: KnowledgeBasesRepository,
    private readonly documents: DocumentsRepository,
    private readonly membership: DocumentMembershipService,
    private readonly transactions: TransactionRunner,
    private readonly events: OutboxWriter,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(BLOB_STORE) private readonly blobs: Pick<BlobStore, 'delete'>,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly audit: DocumentAudit,
    @Inject(GENERATIONS) private readonly generations: Pick<IndexGenerations, 'bump'>,
    private readonly holds: HeldDocuments,
  ) {}

  /**
   * Empties a knowledge base and keeps it (its pipeline, tag rule and metadata): the documents
   * the caller may read whose only knowledge base it is are deleted in one statement, the others
   * leave it. One transaction: the rows, their `deleted` and `attributes_changed` events, the
   * audit records and `knowledge_base_emptied` commit together. Documents the caller cannot read
   * stay (a tenant admin reads them all), and so do those a legal hold covers: they stay in it,
   * counted in `held` with the names of the holds (docs/adr/0052).
   */
  async empty(tenantId: TenantId, access: Access, id: string): Promise<EmptyResult> {
    requireDocumentAction(access, 'delete');
    await requireKnowledgeBase(this.knowledgeBases, tenantId, id);
    const started = Date.now();
    const jobId = randomUUID();
    const visibility = visibilityOf(access);
    const now = this.clock();
    const outcome = await this.transactions.run(async (trx) => {
      const held = await heldMembers(this.documents, this.holds, trx, tenantId, id, visibility);
      const deleted = await this.deleteOnlyIn(trx, tenantId, access, id, visibility, held, {
        jobId,
        cause: 'emptied',
      });
      const { unlinked, retained } = await this.unlink(trx, tenantId, id, visibility, now, held);
      const removed = deleted.length + unlinked;
      await this.events.enqueue(trx, Topics.collection, tenantId, id, {
        kind: 'knowledge_base_emptied',
        knowledgeBaseId: id,
        deletedCount: removed,
        jobId,
      });
      return { deleted, unlinked, retained, held };
    });
    this.outbox.wake();
    await this.retireCachedResults(tenantId, outcome.deleted.length);
    this.cleanUpBlobs(outcome.deleted);
    const result: EmptyResult = {
      jobId,
      knowledgeBaseId: id,
      status: 'completed',
      deletedCount: outcome.deleted.length + outcome.unlinked,
      unlinkedCount: outcome.unlinked,
      retainedCount: outcome.retained,
      indexRemoval: 'scheduled',
      tookMs: Date.now() - started,
      ...heldField(outcome.held),
    };
    this.logger.log(`emptied knowledge base ${id}: ${JSON.stringify(result)}`);
    return result;
  }

  /**
   * Deletes a knowledge base. Without `cascade`, a knowledge base holding a document the caller
   * may read is refused (409 `knowledge_base_not_empty`); with it, those documents are deleted
   * when it is their only knowledge base and leave it otherwise. Documents the caller cannot read
   * are never deleted and never counted: they leave it (into `default` when it was their only
   * one), so a refusal never tells the caller that a document they cannot read exists. A
   * knowledge base a legal hold names is 409 `legal_hold`; documents a hold covers are not
   * deleted by the cascade but leave it like the others, counted in `held` (docs/adr/0052).
   */
  async delete(
    tenantId: TenantId,
    access: Access,
    id: string,
    cascade: boolean,
  ): Promise<DeleteKnowledgeBaseResult> {
    requireDocumentAction(access, 'write');
    if (cascade) requireDocumentAction(access, 'delete');
    await requireKnowledgeBase(this.knowledgeBases, tenantId, id);
    const visibility = visibilityOf(access);
    const now = this.clock();
    const outcome = await this.transactions.run(async (trx) => {
      await refuseHeldKnowledgeBase(this.holds, trx, tenantId, id);
      const readable = await this.documents.lockMembers(trx, tenantId, id, visibility);
      if (readable.length > 0 && !cascade) {
        throw new KnowledgeBaseError(
          KnowledgeBaseErrorCode.NotEmpty,
          `knowledge base ${id} still has ${readable.length} document(s) you can read: delete with cascade=true, empty it, or move them first`,
        );
      }
      // Gone first, so that its tag rule no longer holds anything.
      if (!(await this.knowledgeBases.delete(trx, tenantId, id))) throw knowledgeBaseNotFound(id);
      const held = cascade
        ? await heldMembers(this.documents, this.holds, trx, tenantId, id, visibility)
        : new Map<string, string>();
      const deleted = cascade
        ? await this.deleteOnlyIn(trx, tenantId, access, id, visibility, held, {
            jobId: randomUUID(),
            cause: 'knowledge_base_deleted',
          })
        : [];
      const mine = await this.unlink(trx, tenantId, id, visibility, now);
      // Whatever is left is hidden from the caller: it leaves too, and is not reported to them.
      const hidden = await this.unlink(trx, tenantId, id, 'all', now);
      await this.events.enqueue(trx, Topics.collection, tenantId, id, {
        kind: 'knowledge_base_deleted',
        knowledgeBaseId: id,
        cascade,
        deletedCount: deleted.length,
        unlinkedCount: mine.unlinked + hidden.unlinked,
      });
      return { deleted, unlinked: mine.unlinked, held };
    });
    this.outbox.wake();
    await this.retireCachedResults(tenantId, outcome.deleted.length);
    this.cleanUpBlobs(outcome.deleted);
    return {
      id,
      cascade,
      deletedCount: outcome.deleted.length,
      unlinkedCount: outcome.unlinked,
      indexRemoval: 'scheduled',
      ...heldField(outcome.held),
    };
  }

  /**
   * One DELETE for the rows, then their removal as `documents_removed` events of ≤ 1,000 ids
   * (indexing-service drops each batch with set-based deletes, ADR 24) and their audit records,
   * in few INSERTs. Each batch is keyed by its first id, so the batches spread over the
   * partitions as the documents' own events would.
   */
  private async deleteOnlyIn(
    trx: Trx,
    tenantId: TenantId,
    access: Access,
    id: string,
    visibility: Visibility,
    held: Map<string, string>,
    job: { jobId: string; cause: 'emptied' | 'knowledge_base_deleted' },
  ): Promise<DeletedDocument[]> {
    const deleted = await this.documents.deleteOnlyIn(trx, tenantId, id, visibility, [
      ...held.keys(),
    ]);
    const batches = Math.ceil(deleted.length / DOCUMENTS_REMOVED_BATCH);
    await this.events.enqueueMany(
      trx,
      Topics.document,
      tenantId,
      Array.from({ length: batches }, (_, batch) => {
        const documentIds = deleted
          .slice(batch * DOCUMENTS_REMOVED_BATCH, (batch + 1) * DOCUMENTS_REMOVED_BATCH)
          .map((row) => row.id);
        return {
          key: documentIds[0]!,
          payload: {
            kind: 'documents_removed' as const,
            documentIds,
            knowledgeBaseId: id,
            ...job,
            batch,
            batches,
          },
        };
      }),
    );
    for (let at = 0; at < deleted.length; at += AUDIT_BATCH) {
      const ids = deleted.slice(at, at + AUDIT_BATCH).map((row) => row.id);
      await this.audit.record(trx, 'document_deleted', access, ids, { knowledgeBaseId: id });
    }
    return deleted;
  }

  /**
   * The documents of `id` that `visibility` may read leave it (its id leaves their explicit
   * ones; `default` when none would be left and `id` is not `default`), each with its
   * `attributes_changed` event. Those its tag rule still holds are retained, those in `keep`
   * (held) are left as they are.
   */
  private async unlink(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    visibility: Visibility,
    now: Date,
    keep: Map<string, string> = new Map(),
  ): Promise<{ unlinked: number; retained: number }> {
    let unlinked = 0;
    let retained = 0;
    for (const document of await this.documents.lockMembers(trx, tenantId, id, visibility)) {
      if (keep.has(document.id)) continue;
      const rest = document.explicitKnowledgeBaseIds.filter((kb) => kb !== id);
      const others = document.knowledgeBaseIds.filter((kb) => kb !== id);
      const explicit =
        rest.length > 0 || others.length > 0 || id === DEFAULT_KNOWLEDGE_BASE
          ? rest
          : [DEFAULT_KNOWLEDGE_BASE];
      const changed = await this.membership.editAttributes(
        trx,
        document,
        { knowledgeBaseIds: explicit },
        now,
      );
      if (changed.knowledgeBaseIds.includes(id)) retained += 1;
      else unlinked += 1;
    }
    return { unlinked, retained };
  }

  /**
   * Search leaves deleted documents out at once, before indexing-service has dropped their chunks
   * (docs/adr/0024): query-service drops the hits of documents this service answers 404 for, and
   * this bump, after the commit, retires every search result cached before it (they are served
   * only at the generation they were computed at). A failed bump is logged, not thrown: the rows
   * are gone and the answer stands; indexing-service bumps again once the chunks are gone.
   */
  private async retireCachedResults(tenantId: TenantId, deleted: number): Promise<void> {
    if (deleted === 0) return;
    try {
      await this.generations.bump(tenantId);
    } catch (error) {
      this.logger.warn(`index generation not bumped after ${deleted} deletes: ${String(error)}`);
    }
  }

  /**
   * Originals no document points at any more are deleted from S3 after the commit, a few at a
   * time; a failure is logged (the object stays, unreferenced) and never undoes the delete.
   */
  private cleanUpBlobs(deleted: DeletedDocument[]): void {
    const candidates = [...new Map(deleted.map((row) => [row.blobKey, row])).values()];
    if (candidates.length === 0) return;
    void (async () => {
      let removed = 0;
      await forEachConcurrently(candidates, BLOB_DELETES_AT_ONCE, async (row) => {
        if (await this.documents.isBlobReferenced(row.sha256, row.blobKey)) return;
        await this.blobs.delete(row.blobKey);
        removed += 1;
      });
      this.logger.log(`removed ${removed} original(s) of ${deleted.length} deleted document(s)`);
    })().catch((error: unknown) =>
      this.logger.warn(`originals of deleted documents were not all removed: ${String(error)}`),
    );
  }
}
