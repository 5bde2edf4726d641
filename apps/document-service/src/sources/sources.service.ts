import { randomUUID } from 'node:crypto';

import type { Access } from '@kb/auth';
import type { TenantId } from '@kb/contracts';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { DocumentError, DocumentErrorCode } from '../documents/documents.errors';
import { KnowledgeBaseDirectory } from '../pipelines/knowledge-base-directory.port';
import { CLOCK, type Clock } from '../platform/tokens';
import type { CreateSource, SourceView, SyncView } from './source.model';
import { SourceSyncService } from './source-sync.service';
import { SourceError, SourceErrorCode } from './sources.errors';
import { SourcesRepository } from './sources.repository';

/** Creating, deleting and syncing a source needs `write` on documents; reading needs none. */
function requireWrite(access: Access): void {
  if (!access.documentActions.has('write')) {
    throw new DocumentError(
      DocumentErrorCode.PermissionDenied,
      `write on documents is not granted to ${access.userId}`,
    );
  }
}

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
    @Inject(DOCUMENT_CONFIG) private readonly config: Pick<DocumentConfig, 'S3_BUCKET'>,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async create(tenantId: TenantId, access: Access, input: CreateSource): Promise<SourceView> {
    requireWrite(access);
    await this.knowledgeBases.requireExisting(tenantId, [input.knowledgeBaseId]);
    if (input.kind === 's3' && input.bucket === this.config.S3_BUCKET) {
      // Every tenant's originals live there: a source must never read it.
      throw new SourceError(
        SourceErrorCode.BucketRefused,
        `bucket "${input.bucket}" is the service's own and cannot be a source`,
      );
    }
    return this.sources.insert(tenantId, {
      ...input,
      id: randomUUID(),
      createdBy: access.userId,
      now: this.clock(),
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
    requireWrite(access);
    if (!(await this.sources.delete(tenantId, id))) {
      throw new SourceError(SourceErrorCode.NotFound, `source ${id} not found`);
    }
    return { sourceId: id };
  }

  /**
   * Syncs an S3 source as the caller. With `wait`, answers the finished sync; without, answers
   * the running one at once and goes on in the background (`GET …/syncs/{syncId}` follows it).
   */
  async sync(tenantId: TenantId, access: Access, id: string, wait: boolean): Promise<SyncOutcome> {
    requireWrite(access);
    const source = await this.get(tenantId, id);
    if (source.kind !== 's3') {
      throw new SourceError(
        SourceErrorCode.NotSyncable,
        `source ${id} is a folder: sync it with "kb sync <dir> --source ${id}"`,
      );
    }
    const started = await this.syncs.start(tenantId, source);
    const running = this.syncs.run(tenantId, access, source, started);
    if (wait) return { sync: await running, finished: true };
    const tracked = running
      .catch((error: unknown) =>
        // Left running; its heartbeat stops, so the next sync takes it over as abandoned.
        this.logger.error(`sync ${started.id} of source ${id} failed: ${String(error)}`),
      )
      .finally(() => this.background.delete(tracked));
    this.background.add(tracked);
    return { sync: started, finished: false };
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

  /** Lets background syncs finish (their files and counts recorded) before the process exits. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.background);
  }

  async history(tenantId: TenantId, id: string, limit: number): Promise<{ items: SyncView[] }> {
    await this.get(tenantId, id);
    return { items: await this.sources.syncs(tenantId, id, limit) };
  }
}
