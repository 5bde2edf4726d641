import { randomUUID } from 'node:crypto';

import type { Access, AccessPolicy, Caller } from '@kb/auth';
import type { TenantId } from '@kb/contracts';
import { ACCESS_POLICY } from '@kb/http';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';

import { requireDocumentAction } from '../access/document-actions';
import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import type { UploadOptions } from '../documents/upload-document';
import { KnowledgeBaseDirectory } from '../pipelines/knowledge-base-directory.port';
import { CLOCK, type Clock } from '../platform/tokens';
import type { ClientSyncReport, CreateSource, SourceView, SyncView } from './source.model';
import { isGranted } from './source-grants';
import { nextRunOf } from './source-schedule';
import { SourceSyncService, type SyncGuard } from './source-sync.service';
import { SourceError, SourceErrorCode } from './sources.errors';
import { SourcesRepository } from './sources.repository';

/** `source:<uuid>/…`: the source id of an external id under the reserved prefix. */
const FOLDER_SOURCE_ID = /^source:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\//;

/** What `sync` answers: the finished sync, or (not waiting) the one just started. */
export interface SyncOutcome {
  sync: SyncView;
  finished: boolean;
}

@Injectable()
export class SourcesService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(SourcesService.name);
  /** Syncs running in the background, awaited at shutdown. */
  private readonly background = new Set<Promise<unknown>>();

  constructor(
    private readonly sources: SourcesRepository,
    private readonly syncs: SourceSyncService,
    private readonly knowledgeBases: KnowledgeBaseDirectory,
    @Inject(DOCUMENT_CONFIG)
    private readonly config: Pick<DocumentConfig, 'S3_BUCKET' | 'SOURCE_ALLOWLIST'>,
    @Inject(ACCESS_POLICY) private readonly accessPolicy: AccessPolicy,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async create(tenantId: TenantId, access: Access, input: CreateSource): Promise<SourceView> {
    requireDocumentAction(access, 'write');
    if (input.kind === 's3') this.requireGrant(tenantId, input.bucket!, input.prefix);
    await this.knowledgeBases.requireExisting(tenantId, [input.knowledgeBaseId]);
    const now = this.clock();
    return this.sources.insert(tenantId, {
      ...input,
      id: randomUUID(),
      createdBy: access.userId,
      now,
      nextSyncAt: input.schedule ? nextRunOf(input.schedule, input.timezone ?? null, now) : null,
    });
  }

  list(tenantId: TenantId): Promise<SourceView[]> {
    return this.sources.list(tenantId);
  }

  async get(tenantId: TenantId, id: string): Promise<SourceView> {
    const source = await this.sources.find(tenantId, id);
    if (!source) throw new SourceError(SourceErrorCode.NotFound, `source ${id} not found`);
    return source;
  }

  /** The source and its history go; the documents it brought stay (delete them, or sync first). */
  async delete(tenantId: TenantId, access: Access, id: string): Promise<{ sourceId: string }> {
    requireDocumentAction(access, 'write');
    if (!(await this.sources.delete(tenantId, id))) {
      throw new SourceError(SourceErrorCode.NotFound, `source ${id} not found`);
    }
    return { sourceId: id };
  }

  /**
   * Syncs an S3 source as the caller. With `wait`, answers the finished sync; without, answers
   * the running one at once and goes on in the background (`GET …/syncs/{syncId}` follows it).
   * The grant and the caller's `write` are checked again before every batch of files (N15): a
   * revoked caller or a withdrawn grant stops the sync.
   */
  async sync(
    tenantId: TenantId,
    caller: Caller,
    access: Access,
    id: string,
    wait: boolean,
  ): Promise<SyncOutcome> {
    requireDocumentAction(access, 'write');
    const source = await this.get(tenantId, id);
    if (source.kind !== 's3') {
      throw new SourceError(
        SourceErrorCode.NotSyncable,
        `source ${id} is a folder: sync it with "kb sync <dir> --source ${id}"`,
      );
    }
    this.requireGrant(tenantId, source.bucket!, source.prefix);
    const guard: SyncGuard = async () => {
      this.requireGrant(tenantId, source.bucket!, source.prefix);
      const now = await this.accessPolicy.accessOf(caller);
      if (!now.documentActions.has('write')) {
        throw new SourceError(
          SourceErrorCode.AccessRevoked,
          `write on documents was revoked from ${caller.userId} during the sync`,
        );
      }
      return now;
    };
    const started = await this.syncs.start(tenantId, source);
    const running = this.syncs.run(tenantId, guard, source, started);
    if (wait) return { sync: await running, finished: true };
    this.inBackground(running, started, id);
    return { sync: started, finished: false };
  }

  /**
   * A sync its schedule started (the scheduler claimed the due time, ADR 43): in the background,
   * as the source's creator with the rights to the documents the source brought (its external-id
   * prefix, in its knowledge base) — the same documents a manual sync touches. The operator's
   * grant is checked before it starts and before every batch; deleting the source, or the grant,
   * stops the next one. Answers the started sync, or undefined when one is already running.
   */
  async syncOnSchedule(tenantId: TenantId, source: SourceView): Promise<SyncView | undefined> {
    if (source.kind !== 's3') return undefined;
    const access: Access = {
      tenantId,
      userId: source.createdBy,
      principals: [],
      documentActions: new Set(['read', 'write', 'delete']),
      // Its reads are the source's own external ids: a sync never looks past them.
      isAdmin: true,
    };
    const guard: SyncGuard = async () => {
      this.requireGrant(tenantId, source.bucket!, source.prefix);
      if (!(await this.sources.find(tenantId, source.id))) {
        throw new SourceError(SourceErrorCode.NotFound, `source ${source.id} was deleted`);
      }
      return access;
    };
    await guard();
    let started: SyncView;
    try {
      started = await this.syncs.start(tenantId, source, 'schedule');
    } catch (error) {
      if (error instanceof SourceError && error.code === SourceErrorCode.SyncInProgress) {
        return undefined;
      }
      throw error;
    }
    this.inBackground(this.syncs.run(tenantId, guard, source, started), started, source.id);
    return started;
  }

  private inBackground(running: Promise<unknown>, started: SyncView, sourceId: string): void {
    const tracked = running
      .catch((error: unknown) =>
        // Left running; its heartbeat stops, so the next sync takes it over as abandoned.
        this.logger.error(`sync ${started.id} of source ${sourceId} failed: ${String(error)}`),
      )
      .finally(() => this.background.delete(tracked));
    this.background.add(tracked);
  }

  /**
   * `kb sync --source` opens a sync of a folder source before it uploads (ADR 43): the same
   * one-running-sync lease as the server's syncs, `trigger: client`. 409 `source_not_syncable`
   * for an S3 source (the server syncs those), `sync_in_progress` while one runs.
   */
  async openClientSync(tenantId: TenantId, access: Access, id: string): Promise<SyncView> {
    requireDocumentAction(access, 'write');
    const source = await this.folderSource(tenantId, id);
    return this.syncs.start(tenantId, source, 'client');
  }

  /**
   * The CLI's report closes its sync and enqueues `source_synced`, as the server's syncs do, so
   * webhooks follow folder syncs too. 409 `sync_not_running` when the sync was closed meanwhile
   * (taken over as abandoned after SYNC_STALE_AFTER_MS without a report).
   */
  async finishClientSync(
    tenantId: TenantId,
    access: Access,
    id: string,
    syncId: string,
    report: ClientSyncReport,
  ): Promise<SyncView> {
    requireDocumentAction(access, 'write');
    const source = await this.folderSource(tenantId, id);
    const sync = await this.getSync(tenantId, id, syncId);
    if (sync.status !== 'running' || sync.trigger !== 'client') {
      throw new SourceError(
        SourceErrorCode.SyncNotRunning,
        `sync ${syncId} of source ${id} is ${sync.status === 'running' ? 'not a client sync' : sync.status}`,
      );
    }
    return this.syncs.finish(tenantId, source, syncId, report);
  }

  private async folderSource(tenantId: TenantId, id: string): Promise<SourceView> {
    const source = await this.get(tenantId, id);
    if (source.kind !== 'folder') {
      throw new SourceError(
        SourceErrorCode.NotSyncable,
        `source ${id} is an S3 source: the server syncs it (POST /v1/sources/${id}/sync)`,
      );
    }
    return source;
  }

  async getSync(tenantId: TenantId, id: string, syncId: string): Promise<SyncView> {
    await this.get(tenantId, id);
    const sync = await this.sources.findSync(tenantId, id, syncId);
    if (!sync) {
      throw new SourceError(
        SourceErrorCode.SyncNotFound,
        `sync ${syncId} of source ${id} not found`,
      );
    }
    return sync;
  }

  /**
   * How a caller's upload may use a `source:` external id (reserved, review N13): a folder source
   * is synced by the CLI over the upload API, so `source:<id>/…` of one of the tenant's folder
   * sources is the caller's to write; an S3 source's ids stay the server sync's alone.
   */
  async uploadOptionsFor(
    tenantId: TenantId,
    externalId: string | undefined,
  ): Promise<UploadOptions> {
    const id = externalId?.match(FOLDER_SOURCE_ID)?.[1];
    if (id === undefined) return {};
    const source = await this.sources.find(tenantId, id);
    return source?.kind === 'folder' ? { sourceSync: true } : {};
  }

  /** 403 `source_not_allowed` unless an operator granted the tenant this bucket and prefix. */
  private requireGrant(tenantId: TenantId, bucket: string, prefix: string): void {
    if (!isGranted(this.config.SOURCE_ALLOWLIST, this.config.S3_BUCKET, tenantId, bucket, prefix)) {
      throw new SourceError(
        SourceErrorCode.NotAllowed,
        `no grant lets this tenant's sources read bucket "${bucket}" under prefix "${prefix}": an operator grants buckets in SOURCE_ALLOWLIST`,
      );
    }
  }

  /** Lets background syncs finish (their files and counts recorded) before the process exits. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.background);
  }

  async history(tenantId: TenantId, id: string, limit: number): Promise<{ items: SyncView[] }> {
    await this.get(tenantId, id);
    return { items: await this.sources.syncs(tenantId, id, limit) };
  }
}
