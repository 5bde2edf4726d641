/**
 * Sources that sync (issue 13 part 4, ADR 26), through the public REST API and the built CLI:
 * an S3 bucket and prefix synced by the server (added, updated, unchanged, deleted, and the
 * history), a second sync of an unchanged source that changes nothing, and `kb sync <dir>`.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { S3BlobStore } from '@kb/storage';

import { useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(300_000);

type Counts = {
  added: number;
  updated: number;
  unchanged: number;
  deleted: number;
  failed: number;
};
const counts = (c: Partial<Counts>): Counts => ({
  added: 0,
  updated: 0,
  unchanged: 0,
  deleted: 0,
  failed: 0,
  ...c,
});

/** What the API answered, read loosely: each test reads the fields it asserts on. */
type Answer = {
  error: { code: string };
  items: Array<{ id: string; counts: Counts; finishedAt: string | null }>;
  [field: string]: unknown;
};

describe('sources that sync', () => {
  /** The buckets an operator grants the suite's tenant (SOURCE_ALLOWLIST), made as tests need them. */
  const granted = [1, 2, 3, 4, 5].map(() => `kb-src-${randomUUID().slice(0, 8)}`);
  /** A bucket granted under `public/` only. */
  const partlyGranted = `kb-src-${randomUUID().slice(0, 8)}`;
  const suite = useSuite('sources', 6600, (tenant) => ({
    // Scheduled syncs (ADR 43): the scheduler looks for due sources twice a second here.
    SOURCE_SCHEDULE_TICK_MS: '500',
    SOURCE_ALLOWLIST: JSON.stringify({
      [tenant]: [
        ...granted.map((bucket) => ({ bucket, prefix: '' })),
        { bucket: partlyGranted, prefix: 'public/' },
      ],
    }),
  }));
  const api = async (
    path: string,
    init: { method?: string; body?: unknown; caller?: Parameters<typeof suite.auth>[0] } = {},
  ) => {
    const response = await fetch(`${suite.documentUrl}${path}`, {
      method: init.method ?? 'GET',
      headers: { 'content-type': 'application/json', ...(await suite.auth(init.caller)) },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as Answer };
  };
  const documentsOf = async (prefix: string) =>
    (await api(`/v1/documents?externalIdPrefix=${encodeURIComponent(prefix)}`)).body
      .items as unknown as Array<{
      id: string;
      externalId: string;
      version: number;
      status: string;
    }>;
  const allIndexed = (prefix: string, expected: number) =>
    waitFor(
      () => documentsOf(prefix),
      (docs) => docs.length === expected && docs.every((d) => d.status === 'indexed'),
      120_000,
      500,
    );

  /** A bucket of its own on the suite's S3 server: the next granted one, unless named. */
  const newBucket = async (bucket = granted.shift()!) => {
    const store = new S3BlobStore({
      endpoint: suite.env['S3_ENDPOINT'],
      region: suite.env['S3_REGION'] ?? 'us-east-1',
      bucket,
      accessKeyId: suite.env['S3_ACCESS_KEY_ID'],
      secretAccessKey: suite.env['S3_SECRET_ACCESS_KEY'],
    });
    await store.ensureBucket();
    return { bucket, store };
  };

  it('syncs an S3 prefix: adds, versions, leaves and deletes, and keeps the history', async () => {
    const { bucket, store } = await newBucket();
    await store.put('docs/a.md', '# Alpha\n\nThe quarry bell rings at dawn for the cutters.');
    await store.put('docs/b.txt', 'Brine shrimp hatch in the salt pans of the old works.');
    await store.put('docs/sub/c.md', '# Gamma\n\nCopper flues carry smoke over the ridge.');
    await store.put('docs/drafts/x.md', 'excluded by a glob');
    await store.put('docs/photo.png', 'not included');
    await store.put('elsewhere/e.md', 'outside the prefix');
    expect(
      (await api('/v1/knowledge-bases', { method: 'POST', body: { id: 'kb-src', name: 'Src' } }))
        .status,
    ).toBe(201);

    // The documents bucket holds every tenant's originals: never a source.
    const own = await api('/v1/sources', {
      method: 'POST',
      body: {
        name: 'x',
        kind: 's3',
        bucket: suite.env['S3_BUCKET'] ?? 'kb-documents',
        knowledgeBaseId: 'kb-src',
      },
    });
    expect(own.status).toBe(403);
    expect(own.body.error.code).toBe('source_not_allowed');

    const created = await api('/v1/sources', {
      method: 'POST',
      body: {
        name: 'Docs bucket',
        kind: 's3',
        bucket,
        prefix: 'docs/',
        include: ['**/*.md', '**/*.txt'],
        exclude: ['drafts/**'],
        knowledgeBaseId: 'kb-src',
      },
    });
    expect(created.status).toBe(201);
    const source = created.body as unknown as { id: string; externalIdPrefix: string };
    expect((await api('/v1/sources')).body.items.map((s) => s.id)).toContain(source.id);
    expect((await api(`/v1/sources/${source.id}`)).body).toMatchObject({ bucket, prefix: 'docs/' });

    const first = await api(`/v1/sources/${source.id}/sync`, { method: 'POST' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'succeeded', counts: counts({ added: 3 }) });
    const docs = await allIndexed(source.externalIdPrefix, 3);
    expect(docs.map((d) => d.externalId).sort()).toEqual(
      ['a.md', 'b.txt', 'sub/c.md'].map((p) => `${source.externalIdPrefix}${p}`),
    );
    const lexical = await suite.search({
      query: 'quarry bell',
      mode: 'lexical',
      knowledgeBaseIds: ['kb-src'],
    });
    expect(lexical.hits.map((h) => h.documentId)).toContain(
      docs.find((d) => d.externalId.endsWith('/a.md'))!.id,
    );

    // Nothing changed in the bucket: the second sync changes nothing.
    const second = await api(`/v1/sources/${source.id}/sync`, { method: 'POST' });
    expect(second.body).toMatchObject({ status: 'succeeded', counts: counts({ unchanged: 3 }) });
    expect((await documentsOf(source.externalIdPrefix)).map((d) => d.version)).toEqual([1, 1, 1]);

    await store.put('docs/b.txt', 'Brine shrimp now hatch in the new evaporation ponds.');
    await store.delete('docs/sub/c.md');
    await store.put('docs/d.md', '# Delta\n\nA fourth page about the tide mill.');
    const third = await api(`/v1/sources/${source.id}/sync`, { method: 'POST' });
    expect(third.body).toMatchObject({
      status: 'succeeded',
      counts: counts({ added: 1, updated: 1, unchanged: 1, deleted: 1 }),
    });
    const after = await waitFor(
      () => documentsOf(source.externalIdPrefix),
      (d) => d.length === 3 && d.every((x) => x.status === 'indexed'),
      120_000,
      500,
    );
    expect(
      Object.fromEntries(
        after.map((d) => [d.externalId.slice(source.externalIdPrefix.length), d.version]),
      ),
    ).toEqual({
      'a.md': 1,
      'b.txt': 2,
      'd.md': 1,
    });

    const history = await api(`/v1/sources/${source.id}/syncs`);
    expect(history.body.items.map((s) => s.counts)).toEqual([
      counts({ added: 1, updated: 1, unchanged: 1, deleted: 1 }),
      counts({ unchanged: 3 }),
      counts({ added: 3 }),
    ]);
    expect(history.body.items[0]!.finishedAt).toEqual(expect.any(String));

    expect((await api(`/v1/sources/${source.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await api(`/v1/sources/${source.id}`)).status).toBe(404);
    store.destroy();
  });

  it('syncs in the background with wait=false, one sync of a source at a time', async () => {
    const { bucket, store } = await newBucket();
    for (let i = 0; i < 20; i++) {
      await store.put(`notes/n${i}.md`, `# Note ${i}\n\nTide table ${i} for the harbour ${i * 7}.`);
    }
    const created = await api('/v1/sources', {
      method: 'POST',
      body: { name: 'Background', kind: 's3', bucket, knowledgeBaseId: 'default' },
    });
    const source = created.body as unknown as { id: string; externalIdPrefix: string };

    // Two at once: one starts (202, running), the other is refused while it runs.
    const [a, b] = await Promise.all(
      [1, 2].map(() => api(`/v1/sources/${source.id}/sync?wait=false`, { method: 'POST' })),
    );
    expect([a!.status, b!.status].sort()).toEqual([202, 409]);
    const [started, refused] = a!.status === 202 ? [a!, b!] : [b!, a!];
    expect(started.body).toMatchObject({ status: 'running', finishedAt: null });
    expect(refused.body.error.code).toBe('sync_in_progress');
    const syncId = started.body['id'] as string;

    const finished = await waitFor(
      async () => (await api(`/v1/sources/${source.id}/syncs/${syncId}`)).body,
      (sync) => sync['status'] !== 'running',
      120_000,
      250,
    );
    expect(finished).toMatchObject({ status: 'succeeded', counts: counts({ added: 20 }) });
    expect(finished['finishedAt']).toEqual(expect.any(String));
    expect((await documentsOf(source.externalIdPrefix)).length).toBe(20);
    // Finished: the next sync may run, and changes nothing (the CLI starts it in the background
    // and follows it to the end).
    const cli = async (...args: string[]) =>
      JSON.parse(
        (
          await promisify(execFile)(
            process.execPath,
            ['apps/kb-cli/dist/main.js', 'sources', ...args, '--json'],
            { env: { ...process.env, KB_TOKEN: suite.token, KB_DOCUMENTS_URL: suite.documentUrl } },
          )
        ).stdout,
      ) as Record<string, unknown>;
    expect(await cli('sync', source.id, '--poll-ms', '200')).toMatchObject({
      status: 'succeeded',
      counts: counts({ unchanged: 20 }),
    });
    expect(((await cli('list')) as { items: Array<{ id: string }> }).items).toContainEqual(
      expect.objectContaining({ id: source.id, bucket }),
    );
    const history = (await cli('syncs', source.id)) as { items: Array<{ id: string }> };
    expect(history.items.map((h) => h.id)).toHaveLength(2);
    expect(history.items[1]!.id).toBe(syncId);
    expect((await api(`/v1/sources/${source.id}/syncs/${randomUUID()}`)).body.error.code).toBe(
      'sync_not_found',
    );
    expect((await api(`/v1/sources/${source.id}/sync?wait=maybe`, { method: 'POST' })).status).toBe(
      400,
    );
    store.destroy();
  });

  it('syncs a source on its cron schedule by itself, and refuses a schedule that does not parse', async () => {
    const { bucket, store } = await newBucket();
    await store.put('tides.md', '# Tides\n\nThe scheduled sync brings the spring tide table.');
    const refused = await api('/v1/sources', {
      method: 'POST',
      body: { name: 'Bad', kind: 's3', bucket, knowledgeBaseId: 'default', schedule: 'daily' },
    });
    expect(refused).toMatchObject({ status: 400, body: { error: { code: 'invalid_schedule' } } });
    const created = await api('/v1/sources', {
      method: 'POST',
      // Every second (croner's six-field form), read in a named time zone.
      body: {
        name: 'Scheduled',
        kind: 's3',
        bucket,
        knowledgeBaseId: 'default',
        schedule: '* * * * * *',
        timezone: 'Europe/Paris',
      },
    });
    expect(created.status).toBe(201);
    const source = created.body as unknown as {
      id: string;
      externalIdPrefix: string;
      schedule: string;
      timezone: string;
      nextSyncAt: string;
    };
    expect(source).toMatchObject({ schedule: '* * * * * *', timezone: 'Europe/Paris' });
    expect(Date.parse(source.nextSyncAt)).toBeGreaterThan(Date.now() - 5_000);
    try {
      // Nobody asks: the schedule does, and the history says so.
      const history = await waitFor(
        async () =>
          (await api(`/v1/sources/${source.id}/syncs`)).body.items as unknown as Array<{
            trigger: string;
            status: string;
            counts: Counts;
          }>,
        (items) => items.some((s) => s.trigger === 'schedule' && s.status === 'succeeded'),
        60_000,
        250,
      );
      const first = history[history.length - 1]!;
      expect(first).toMatchObject({ trigger: 'schedule', counts: counts({ added: 1 }) });
      await allIndexed(source.externalIdPrefix, 1);
    } finally {
      // Deleting the source ends its schedule.
      expect((await api(`/v1/sources/${source.id}`, { method: 'DELETE' })).status).toBe(200);
      store.destroy();
    }
  });

  it('records a kb sync of a folder source as its sync, so source.synced fires for it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-sync-source-'));
    writeFileSync(join(dir, 'reef.md'), '# Reef\n\nParrotfish graze the reef at dawn.');
    const created = await api('/v1/sources', {
      method: 'POST',
      body: { name: 'Laptop folder', kind: 'folder', knowledgeBaseId: 'default' },
    });
    const source = created.body as unknown as { id: string };
    try {
      const result = await promisify(execFile)(
        process.execPath,
        ['apps/kb-cli/dist/main.js', 'sync', dir, '--source', source.id, '--json'],
        { env: { ...process.env, KB_TOKEN: suite.token, KB_DOCUMENTS_URL: suite.documentUrl } },
      );
      expect(JSON.parse(result.stdout)).toMatchObject({ counts: counts({ added: 1 }) });
      const history = (await api(`/v1/sources/${source.id}/syncs`)).body.items as unknown as Array<{
        trigger: string;
        status: string;
        counts: Counts;
      }>;
      // The same record (and, in its transaction, the same source_synced event) as a server sync.
      expect(history).toEqual([
        expect.objectContaining({
          trigger: 'client',
          status: 'succeeded',
          counts: counts({ added: 1 }),
          finishedAt: expect.any(String),
        }),
      ]);
      // A report for a sync that is no longer running is refused.
      const syncId = (history[0] as unknown as { id: string }).id;
      expect(
        await api(`/v1/sources/${source.id}/syncs/${syncId}/finish`, {
          method: 'POST',
          body: { counts: counts({}) },
        }),
      ).toMatchObject({ status: 409, body: { error: { code: 'sync_not_running' } } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads only the buckets and prefixes an operator granted the tenant (review N1)', async () => {
    // An operator's unrelated bucket on the same S3 server, which the service's identity reads.
    const payroll = await newBucket(`payroll-${randomUUID().slice(0, 8)}`);
    await payroll.store.put('hr/salaries.txt', 'Quillon Vasquez earns 912345 a year.');
    const create = (bucket: string, prefix = '', caller?: Parameters<typeof suite.auth>[0]) =>
      api('/v1/sources', {
        method: 'POST',
        body: { name: 'x', kind: 's3', bucket, prefix, knowledgeBaseId: 'default' },
        ...(caller ? { caller } : {}),
      });
    const refused = await create(payroll.bucket, 'hr/');
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('source_not_allowed');
    // A bucket that does not exist answers the same: the refusal reveals nothing of the bucket.
    const absent = await create('no-such-bucket-here', 'hr/');
    expect(absent.status).toBe(403);
    const absentError = absent.body.error as { code: string; message: string };
    expect({
      ...absentError,
      message: absentError.message.replace('no-such-bucket-here', payroll.bucket),
    }).toEqual(refused.body.error);

    // Another tenant's editor names this tenant's granted bucket: refused too.
    const { bucket: ours, store } = await newBucket();
    await store.put('notes.md', 'Mirelle keeps the lighthouse log.');
    const otherTenant = await create(ours, '', { tenant: `other-${randomUUID().slice(0, 8)}` });
    expect(otherTenant.status).toBe(403);
    expect(otherTenant.body.error.code).toBe('source_not_allowed');

    // A grant of `public/` covers that prefix and below, not the bucket's root.
    const partly = await newBucket(partlyGranted);
    expect((await create(partlyGranted, '')).status).toBe(403);
    expect((await create(partlyGranted, 'private/')).status).toBe(403);
    expect((await create(partlyGranted, 'public/team/')).status).toBe(201);

    // Nothing of the payroll bucket became searchable for anyone in the tenant.
    const hits = await suite.search({ query: 'Quillon Vasquez salary', mode: 'lexical' });
    expect(JSON.stringify(hits)).not.toContain('912345');
    for (const b of [payroll, partly, { store }]) b.store.destroy();
  });

  it('syncs one object at a time, each held to MAX_UPLOAD_BYTES (review N2)', async () => {
    const { bucket, store } = await newBucket();
    await store.put('big.txt', Buffer.alloc(1024 * 1024 + 1, 'a'));
    await store.put('small.md', '# Small\n\nThe ferry leaves at nine.');
    const created = await api('/v1/sources', {
      method: 'POST',
      body: { name: 'Sizes', kind: 's3', bucket, knowledgeBaseId: 'default' },
    });
    const source = created.body as unknown as { id: string; externalIdPrefix: string };
    const sync = await api(`/v1/sources/${source.id}/sync`, { method: 'POST' });
    expect(sync.body).toMatchObject({
      status: 'succeeded',
      counts: counts({ added: 1, failed: 1 }),
      failures: [{ path: 'big.txt', reason: 'too_large' }],
    });
    expect((await documentsOf(source.externalIdPrefix)).map((d) => d.externalId)).toEqual([
      `${source.externalIdPrefix}small.md`,
    ]);
    // Nothing stays spooled once the sync has answered.
    expect(readdirSync(suite.uploadDir)).toEqual([]);
    store.destroy();
  });

  it('syncs a folder with the built CLI, and a second run changes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-sync-'));
    mkdirSync(join(dir, 'nested'));
    writeFileSync(join(dir, 'one.md'), '# One\n\nLantern fish glow in the trench.');
    writeFileSync(join(dir, 'nested', 'two.txt'), 'Two: basalt columns line the cove.');
    writeFileSync(join(dir, 'skip.log'), 'excluded');
    await api('/v1/knowledge-bases', { method: 'POST', body: { id: 'kb-cli', name: 'Cli' } });
    // Asynchronously: a synchronous spawn would block this process's event loop for the CLI's
    // whole run, and a keep-alive socket the server closed meanwhile would fail the next fetch.
    const kb = (json: boolean) =>
      new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [
            'apps/kb-cli/dist/main.js',
            'sync',
            dir,
            '--kb',
            'kb-cli',
            '--prefix',
            'folder:e2e/',
            '--exclude',
            '*.log',
            ...(json ? ['--json'] : []),
          ],
          { env: { ...process.env, KB_TOKEN: suite.token, KB_DOCUMENTS_URL: suite.documentUrl } },
          (error, stdout, stderr) =>
            resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        );
      });
    const run = async () => {
      const result = await kb(true);
      expect(result.stderr).not.toContain('Error');
      return JSON.parse(result.stdout) as { counts: Counts };
    };
    try {
      expect((await run()).counts).toEqual(counts({ added: 2 }));
      await allIndexed('folder:e2e/', 2);
      expect((await run()).counts).toEqual(counts({ unchanged: 2 }));

      writeFileSync(join(dir, 'one.md'), '# One\n\nLantern fish glow brighter in the trench.');
      unlinkSync(join(dir, 'nested', 'two.txt'));
      writeFileSync(join(dir, 'three.md'), '# Three\n\nKelp forests sway.');
      const table = await kb(false);
      expect(table.status).toBe(0);
      expect(table.stdout).toMatch(/\| added\s+\|\s+1 \|/);
      expect(table.stdout).toMatch(/\| updated\s+\|\s+1 \|/);
      expect(table.stdout).toMatch(/\| deleted\s+\|\s+1 \|/);
      const docs = await allIndexed('folder:e2e/', 2);
      expect(Object.fromEntries(docs.map((d) => [d.externalId, d.version]))).toEqual({
        'folder:e2e/one.md': 2,
        'folder:e2e/three.md': 1,
      });
      expect((await run()).counts).toEqual(counts({ unchanged: 2 }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
