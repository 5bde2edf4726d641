import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';

import type { Access } from '@kb/auth';
import { MemoryBlobStore } from '@kb/testing';

import type { OutboxWake } from '../outbox/outbox.relay';
import { OutboxWriter } from '../outbox/outbox.writer';
import {
  type DocumentServiceFixture,
  documentServiceFixture,
  newAccess,
  TENANT,
} from '../testing/document-service.fixture';
import type { SourceView, SyncView } from './source.model';
import { externalIdPrefixOf } from './source.model';
import { SourceSyncService, SYNC_BATCH_FILES, type SyncGuard } from './source-sync.service';
import { SourceError, SourceErrorCode } from './sources.errors';
import type { SourcesRepository } from './sources.repository';

/** The three calls a sync makes on its bookkeeping, kept in memory. */
function syncBookkeeping() {
  const finished: SyncView[] = [];
  const repository = {
    heartbeat: async () => undefined,
    finishSync: async (
      _trx: unknown,
      _tenant: unknown,
      id: string,
      result: Pick<SyncView, 'status' | 'counts' | 'failures'> & { now: Date },
    ): Promise<SyncView> => {
      const done: SyncView = {
        id,
        sourceId: 's1',
        status: result.status,
        trigger: 'manual',
        counts: result.counts,
        failures: result.failures,
        startedAt: result.now.toISOString(),
        finishedAt: result.now.toISOString(),
      };
      finished.push(done);
      return done;
    },
  };
  return { repository: repository as unknown as SourcesRepository, finished };
}

const SOURCE: SourceView = {
  id: 's1',
  name: 'bucket',
  knowledgeBaseId: 'default',
  kind: 's3',
  bucket: 'tenant-bucket',
  prefix: '',
  include: [],
  exclude: [],
  createdBy: 'alice',
  createdAt: '2026-11-22T10:00:00.000Z',
  schedule: null,
  timezone: null,
  nextSyncAt: null,
  externalIdPrefix: externalIdPrefixOf('s1'),
};

const RUNNING: SyncView = {
  id: 'sync-1',
  sourceId: 's1',
  status: 'running',
  trigger: 'manual',
  counts: { added: 0, updated: 0, unchanged: 0, deleted: 0, failed: 0 },
  failures: [],
  startedAt: '2026-11-22T10:00:00.000Z',
  finishedAt: null,
};

/** A bucket that records how many files sat spooled whenever one of its objects was opened. */
class SpoolWatchingStore extends MemoryBlobStore {
  maxSpooled = 0;
  opened = 0;
  constructor(private readonly spoolDir: () => string) {
    super({ bucket: 'tenant-bucket' });
  }
  override async openRead(key: string): Promise<Readable> {
    this.opened += 1;
    this.maxSpooled = Math.max(this.maxSpooled, readdirSync(this.spoolDir()).length);
    return super.openRead(key);
  }
}

describe('SourceSyncService', () => {
  let fx: DocumentServiceFixture;
  let spoolDir: string;
  let bucket: SpoolWatchingStore;
  let bookkeeping: ReturnType<typeof syncBookkeeping>;
  const access: Access = newAccess();

  const service = (maxUploadBytes = 1024) =>
    new SourceSyncService(
      bookkeeping.repository,
      fx.documents,
      fx.documentsRepository,
      fx.transactions,
      new OutboxWriter(fx.outbox),
      { wake: () => undefined } as unknown as OutboxWake,
      () => bucket,
      {
        UPLOAD_TMP_DIR: spoolDir,
        MAX_UPLOAD_BYTES: maxUploadBytes,
        SOURCE_SYNC_MAX_FILES: 100,
      },
      () => fx.now,
    );

  beforeEach(async () => {
    fx = documentServiceFixture();
    spoolDir = await mkdtemp(join(tmpdir(), 'source-sync-spec-'));
    bucket = new SpoolWatchingStore(() => spoolDir);
    bookkeeping = syncBookkeeping();
  });
  afterEach(() => rm(spoolDir, { recursive: true, force: true }));

  it('spools one object at a time and leaves no spool behind', async () => {
    for (let i = 0; i < 5; i++) await bucket.put(`doc-${i}.md`, `# Doc ${i}\n\nbody ${i}`);
    const sync = await service().run(TENANT, async () => access, SOURCE, RUNNING);
    expect(sync).toMatchObject({ status: 'succeeded', counts: { added: 5, failed: 0 } });
    // Each object's spool is gone before the next is read: never a bucket on disk.
    expect(bucket.opened).toBe(5);
    expect(bucket.maxSpooled).toBe(0);
    expect(readdirSync(spoolDir)).toEqual([]);
  });

  it('fails an object over MAX_UPLOAD_BYTES as too_large and syncs the others', async () => {
    await bucket.put('big.txt', Buffer.alloc(2048, 'a'));
    await bucket.put('small.txt', 'small enough');
    const sync = await service(1024).run(TENANT, async () => access, SOURCE, RUNNING);
    expect(sync).toMatchObject({
      status: 'succeeded',
      counts: { added: 1, failed: 1 },
      failures: [{ path: 'big.txt', reason: SourceErrorCode.TooLarge }],
    });
    expect(readdirSync(spoolDir)).toEqual([]);
    const synced = await fx.documentsRepository.listByExternalIdPrefix(
      TENANT,
      SOURCE.externalIdPrefix,
      'all',
    );
    expect(synced.map((d) => d.externalId)).toEqual([`${SOURCE.externalIdPrefix}small.txt`]);
  });

  it('stops at the next batch once the guard refuses (a revoked caller, a withdrawn grant)', async () => {
    const total = SYNC_BATCH_FILES * 3;
    for (let i = 0; i < total; i++)
      await bucket.put(`f-${String(i).padStart(3, '0')}.txt`, `f${i}`);
    let calls = 0;
    const guard: SyncGuard = async () => {
      calls += 1;
      if (calls > 1) {
        throw new SourceError(SourceErrorCode.AccessRevoked, 'write was revoked from alice');
      }
      return access;
    };
    const sync = await service().run(TENANT, guard, SOURCE, RUNNING);
    expect(sync.status).toBe('failed');
    expect(sync.counts.added).toBe(SYNC_BATCH_FILES);
    expect(sync.failures).toEqual([{ path: '/', reason: SourceErrorCode.AccessRevoked }]);
  });

  it('reads nothing when the guard refuses at the start', async () => {
    await bucket.put('a.txt', 'a');
    const guard: SyncGuard = async () => {
      throw new SourceError(SourceErrorCode.NotAllowed, 'not granted');
    };
    const sync = await service().run(TENANT, guard, SOURCE, RUNNING);
    expect(sync).toMatchObject({
      status: 'failed',
      failures: [{ path: '/', reason: SourceErrorCode.NotAllowed }],
    });
    expect(bucket.opened).toBe(0);
  });
});
