import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import type { Access } from '@kb/auth';
import { type SyncCounts, type TenantId, Topics } from '@kb/contracts';
import { DomainError } from '@kb/errors';
import type { BlobStore } from '@kb/storage';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { lookup } from 'mime-types';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import type { UploadedFile } from '../documents/document-content.storage';
import { DocumentsRepository, visibilityOf } from '../documents/documents.repository';
import { DocumentsService } from '../documents/documents.service';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { OutboxWriter } from '../outbox/outbox.writer';
import { CLOCK, type Clock } from '../platform/tokens';
import { TransactionRunner } from '../platform/transaction.runner';
import { type SourceView, type SyncTrigger, type SyncView } from './source.model';
import { selects } from './source-globs';
import { SourceError, SourceErrorCode } from './sources.errors';
import { SourcesRepository } from './sources.repository';

/** A running sync renews its heartbeat this often... */
export const SYNC_HEARTBEAT_MS = 30_000;
/** ...and one whose heartbeat is older than this was abandoned by a process that died. */
export const SYNC_STALE_AFTER_MS = 5 * 60_000;

/** The guard runs again after this many files: a revoked caller stops within one batch. */
export const SYNC_BATCH_FILES = 20;

/**
 * Checked when a sync starts and before every batch: the source is still granted to the tenant
 * and the caller still holds `write`. Answers the caller's current access, or throws.
 */
export type SyncGuard = () => Promise<Access>;

/** Opens a bucket of the deployment's S3 server (not the documents bucket: sources are refused it). */
export type SourceStores = (bucket: string) => BlobStore & { destroy?: () => void };
export const SOURCE_STORES = Symbol('SOURCE_STORES');

/**
 * Syncs an S3 source into its knowledge base (docs/adr/0026): every object under the prefix that
 * the globs select is hashed; a new path is uploaded, a changed one becomes the next version of
 * its document, an unchanged one is left, and a document whose path is gone is deleted. Each
 * document's external id is the source's prefix plus the path, so a sync only ever touches what
 * the source brought. The counts and failures are recorded, and `source_synced` is enqueued with
 * them in one transaction. Uploads and deletes run as the caller, with their rights as the guard
 * reads them again before each batch.
 */
@Injectable()
export class SourceSyncService {
  private readonly logger = new Logger(SourceSyncService.name);

  constructor(
    private readonly sources: SourcesRepository,
    private readonly documents: DocumentsService,
    private readonly documentRows: DocumentsRepository,
    private readonly transactions: TransactionRunner,
    private readonly events: OutboxWriter,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(SOURCE_STORES) private readonly stores: SourceStores,
    @Inject(DOCUMENT_CONFIG)
    private readonly config: Pick<
      DocumentConfig,
      'UPLOAD_TMP_DIR' | 'MAX_UPLOAD_BYTES' | 'SOURCE_SYNC_MAX_FILES'
    >,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Records the source's sync as running; 409 `sync_in_progress` when one already runs (one at a
   * time: two would race to upload the same paths).
   */
  async start(
    tenantId: TenantId,
    source: SourceView,
    trigger: SyncTrigger = 'manual',
  ): Promise<SyncView> {
    const now = this.clock();
    const outcome = await this.sources.startSync(
      tenantId,
      source.id,
      randomUUID(),
      now,
      new Date(now.getTime() - SYNC_STALE_AFTER_MS),
      trigger,
    );
    if ('running' in outcome) {
      throw new SourceError(
        SourceErrorCode.SyncInProgress,
        `source ${source.id} is already syncing (sync ${outcome.running.id}, started ${outcome.running.startedAt}): wait for it to finish`,
      );
    }
    return outcome.started;
  }

  /** Runs a sync `start` recorded, renewing its heartbeat until it is finished. */
  async run(
    tenantId: TenantId,
    guard: SyncGuard,
    source: SourceView,
    started: SyncView,
  ): Promise<SyncView> {
    const heartbeat = setInterval(() => {
      this.sources
        .heartbeat(tenantId, started.id, this.clock())
        .catch((error: unknown) =>
          this.logger.warn(`sync ${started.id}: heartbeat failed: ${String(error)}`),
        );
    }, SYNC_HEARTBEAT_MS);
    heartbeat.unref();
    try {
      return await this.work(tenantId, guard, source, started);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * One object at a time: spooled (at most MAX_UPLOAD_BYTES), hashed, uploaded when new or
   * changed, and its spool removed before the next is read, so a sync never holds more than one
   * file on disk. Every SYNC_BATCH_FILES files the guard runs again.
   */
  private async work(
    tenantId: TenantId,
    guard: SyncGuard,
    source: SourceView,
    started: SyncView,
  ): Promise<SyncView> {
    const counts: SyncCounts = { added: 0, updated: 0, unchanged: 0, deleted: 0, failed: 0 };
    const failures: SyncView['failures'] = [];
    const fail = (path: string, error: unknown) => {
      counts.failed += 1;
      failures.push({ path, reason: error instanceof DomainError ? error.code : 'internal_error' });
      if (!(error instanceof DomainError))
        this.logger.warn(`sync ${started.id}: ${path}: ${String(error)}`);
    };
    const store = this.stores(source.bucket!);
    let status: 'succeeded' | 'failed' = 'succeeded';
    try {
      let access = await guard();
      const keys = await store.list(source.prefix);
      const paths = keys
        .map((key) => ({ key, path: key.slice(source.prefix.length).replace(/^\/+/, '') }))
        .filter(({ path }) => path !== '' && !path.endsWith('/') && selects(source, path));
      if (paths.length > this.config.SOURCE_SYNC_MAX_FILES) {
        throw new SourceError(
          SourceErrorCode.TooManyFiles,
          `${paths.length} files under the prefix, more than the ${this.config.SOURCE_SYNC_MAX_FILES} a sync takes`,
        );
      }
      const synced = new Map(
        (
          await this.documentRows.listByExternalIdPrefix(
            tenantId,
            source.externalIdPrefix,
            visibilityOf(access),
          )
        ).map((d) => [
          d.externalId!.slice(source.externalIdPrefix.length),
          { documentId: d.id, sha256: d.sha256 },
        ]),
      );
      // A file that could not be read is neither new nor gone: its document stays.
      const present = new Set<string>();
      for (const [i, { key, path }] of paths.entries()) {
        if (i > 0 && i % SYNC_BATCH_FILES === 0) access = await guard();
        present.add(path);
        try {
          const outcome = await this.syncFile(tenantId, access, source, store, key, path, synced);
          counts[outcome] += 1;
        } catch (error) {
          fail(path, error);
        }
      }
      const gone = [...synced].filter(([path]) => !present.has(path));
      for (const [i, [path, { documentId }]] of gone.entries()) {
        if (i % SYNC_BATCH_FILES === 0) access = await guard();
        try {
          await this.documents.delete(tenantId, access, documentId);
          counts.deleted += 1;
        } catch (error) {
          fail(path, error);
        }
      }
    } catch (error) {
      // Not listed, not granted any more, or the caller lost write: the sync failed as a whole.
      status = 'failed';
      fail(source.prefix || '/', error);
    } finally {
      store.destroy?.();
    }
    return this.finish(tenantId, source, started.id, { status, counts, failures });
  }

  /**
   * Records a sync's outcome and enqueues `source_synced` with it, in one transaction: the end of
   * the server's S3 syncs and of the folder syncs `kb sync --source` reports (ADR 43).
   */
  async finish(
    tenantId: TenantId,
    source: SourceView,
    syncId: string,
    outcome: Pick<SyncView, 'status' | 'counts' | 'failures'> & { status: 'succeeded' | 'failed' },
  ): Promise<SyncView> {
    const { counts } = outcome;
    const finished = await this.transactions.run(async (trx) => {
      const done = await this.sources.finishSync(trx, tenantId, syncId, {
        ...outcome,
        now: this.clock(),
      });
      await this.events.enqueue(trx, Topics.collection, tenantId, source.id, {
        kind: 'source_synced',
        sourceId: source.id,
        syncId: done.id,
        knowledgeBaseId: source.knowledgeBaseId,
        counts,
        startedAt: done.startedAt,
        finishedAt: done.finishedAt!,
      });
      return done;
    });
    this.outbox.wake();
    this.logger.log(`source ${source.id} synced: ${JSON.stringify(counts)}`);
    return finished;
  }

  /** Spools, hashes and, when new or changed, uploads one object; its spool is always removed. */
  private async syncFile(
    tenantId: TenantId,
    access: Access,
    source: SourceView,
    store: BlobStore,
    key: string,
    path: string,
    synced: Map<string, { documentId: string; sha256: string }>,
  ): Promise<'added' | 'updated' | 'unchanged'> {
    const { file, sha256 } = await this.download(store, key, path);
    try {
      const before = synced.get(path);
      if (before?.sha256 === sha256) return 'unchanged';
      const uploaded = await this.documents.upload(
        tenantId,
        access,
        file,
        {
          title: path,
          knowledgeBaseIds: [source.knowledgeBaseId],
          externalId: `${source.externalIdPrefix}${path}`,
        },
        undefined,
        { sourceSync: true },
      );
      if (uploaded.unchanged) return 'unchanged';
      return before ? 'updated' : 'added';
    } finally {
      await rm(file.path, { force: true });
    }
  }

  /**
   * The object spooled to a temporary file while hashed, like a multipart upload, and held to
   * MAX_UPLOAD_BYTES as it streams: past it, the download stops and the file fails `too_large`.
   */
  private async download(
    store: BlobStore,
    key: string,
    path: string,
  ): Promise<{ file: UploadedFile; sha256: string }> {
    const target = join(this.config.UPLOAD_TMP_DIR, `kb-sync-${randomUUID()}`);
    const max = this.config.MAX_UPLOAD_BYTES;
    const hash = createHash('sha256');
    let size = 0;
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > max) {
          done(new SourceError(SourceErrorCode.TooLarge, `${path} is larger than ${max} bytes`));
          return;
        }
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(
        await store.openRead(key),
        hashing,
        createWriteStream(target, { mode: 0o600 }),
      );
    } catch (error) {
      await rm(target, { force: true });
      throw error;
    }
    const name = basename(path);
    return {
      file: {
        path: target,
        originalname: name,
        mimetype: lookup(name) || 'application/octet-stream',
        size,
      },
      sha256: hash.digest('hex'),
    };
  }
}
