/**
 * Legal holds, retention and erasure (issue 39 items 1, 2 and 6; ADR 52) through the public REST
 * API and the built CLI: every deletion path against a hold — a document delete, emptying a
 * knowledge base, deleting one (and with cascade), a source sync's removal, retention and an
 * erasure — refuses or skips the held document and says so; a document expiring in about a
 * second is deleted by the retention run; holds are listed and released.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';

import { S3BlobStore } from '@kb/storage';

import { useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(300_000);

type Answer = Record<string, unknown> & { error?: { code: string; message: string } };
const ADMIN = { roles: ['admin'] };

describe('legal holds, retention and erasure', () => {
  const bucket = `kb-hold-${randomUUID().slice(0, 8)}`;
  const suite = useSuite('holds', 8500, (tenant) => ({
    RETENTION_TICK_MS: '500',
    SOURCE_ALLOWLIST: JSON.stringify({ [tenant]: [{ bucket, prefix: '' }] }),
  }));
  const api = async (
    path: string,
    init: { method?: string; body?: unknown; caller?: Parameters<typeof suite.auth>[0] } = {},
  ) => {
    const response = await fetch(`${suite.documentUrl}${path}`, {
      method: init.method ?? 'GET',
      headers: { 'content-type': 'application/json', ...(await suite.auth(init.caller ?? ADMIN)) },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as Answer };
  };
  const upload = async (
    fields: Record<string, unknown>,
    caller: Parameters<typeof suite.auth>[0] = ADMIN,
  ): Promise<string> => {
    const { status, body } = await api('/v1/documents', {
      method: 'POST',
      body: { markdown: `# ${randomUUID()}\n\nHeld or not.`, ...fields },
      caller,
    });
    expect(status).toBe(202);
    return String(body['id']);
  };
  const exists = async (id: string) => (await api(`/v1/documents/${id}`)).status === 200;
  const kb = async (id: string, fields: Record<string, unknown> = {}) =>
    expect(
      (await api('/v1/knowledge-bases', { method: 'POST', body: { id, name: id, ...fields } }))
        .status,
    ).toBe(201);
  const place = async (body: Record<string, unknown>) => {
    const { status, body: hold } = await api('/v1/holds', { method: 'POST', body });
    expect(status).toBe(201);
    return String(hold['id']);
  };

  it('refuses a document delete with 409 legal_hold until the hold is released', async () => {
    const doc = await upload({});
    const holdId = await place({ name: 'Case 1', reason: 'litigation', documentIds: [doc] });

    const refused = await api(`/v1/documents/${doc}`, { method: 'DELETE' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'legal_hold' });
    expect(refused.body.error!.message).toContain('"Case 1"');
    expect((await api(`/v1/holds/${holdId}`)).body).toMatchObject({
      state: 'active',
      heldDocuments: 1,
    });
    expect((await api('/v1/holds')).body['items']).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: holdId, name: 'Case 1' })]),
    );
    // Not an admin: holds are neither shown nor released.
    expect((await api(`/v1/holds/${holdId}`, { caller: { roles: ['editor'] } })).status).toBe(403);

    const released = await api(`/v1/holds/${holdId}/release`, {
      method: 'POST',
      body: { reason: 'settled' },
    });
    expect(released.body).toMatchObject({ state: 'released', releaseReason: 'settled' });
    expect((await api(`/v1/documents/${doc}`, { method: 'DELETE' })).status).toBe(200);
    expect((await api(`/v1/holds/${holdId}/release`, { method: 'POST', body: {} })).status).toBe(
      409,
    );
  });

  it('empties around held documents, refuses deleting a held knowledge base, and cascades around held documents', async () => {
    await kb('emptied');
    const held = await upload({ knowledgeBaseIds: ['emptied'], tags: ['case-2'] });
    const gone = await upload({ knowledgeBaseIds: ['emptied'] });
    await place({ name: 'Case 2', where: { tags: 'case-2' } });

    const emptied = await api('/v1/knowledge-bases/emptied/documents', { method: 'DELETE' });
    expect(emptied.status).toBe(200);
    expect(emptied.body).toMatchObject({
      deletedCount: 1,
      held: { count: 1, reason: 'legal_hold', holds: ['Case 2'] },
    });
    expect(await exists(gone)).toBe(false);
    expect((await api(`/v1/documents/${held}`)).body['knowledgeBaseIds']).toEqual(['emptied']);

    await kb('whole');
    await upload({ knowledgeBaseIds: ['whole'] });
    const kbHold = await place({ name: 'Whole KB', knowledgeBaseId: 'whole' });
    const refused = await api('/v1/knowledge-bases/whole?cascade=true', { method: 'DELETE' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'legal_hold' });
    await api(`/v1/holds/${kbHold}/release`, { method: 'POST', body: {} });

    const cascaded = await api('/v1/knowledge-bases/emptied?cascade=true', { method: 'DELETE' });
    expect(cascaded.status).toBe(200);
    expect(cascaded.body).toMatchObject({ held: { count: 1, holds: ['Case 2'] } });
    expect(await exists(held)).toBe(true);
  });

  it('keeps a held document a source sync would remove, and reports it', async () => {
    const store = new S3BlobStore({
      endpoint: suite.env['S3_ENDPOINT'],
      region: suite.env['S3_REGION'] ?? 'us-east-1',
      bucket,
      accessKeyId: suite.env['S3_ACCESS_KEY_ID'],
      secretAccessKey: suite.env['S3_SECRET_ACCESS_KEY'],
    });
    await store.ensureBucket();
    await store.put('docs/a.md', '# A\n\nKept by a hold.', 'text/markdown');
    const source = await api('/v1/sources', {
      method: 'POST',
      body: { name: 'held', knowledgeBaseId: 'default', kind: 's3', bucket, prefix: 'docs/' },
    });
    const sourceId = String(source.body['id']);
    expect((await api(`/v1/sources/${sourceId}/sync`, { method: 'POST' })).body).toMatchObject({
      status: 'succeeded',
    });
    const prefix = String(source.body['externalIdPrefix'] ?? `source:${sourceId}/`);
    const listed = await api(`/v1/documents?externalIdPrefix=${encodeURIComponent(prefix)}`);
    const [synced] = listed.body['items'] as Array<{ id: string }>;
    await place({ name: 'Case 3', documentIds: [synced!.id] });
    await store.delete('docs/a.md');

    const sync = await api(`/v1/sources/${sourceId}/sync`, { method: 'POST' });

    expect(sync.body).toMatchObject({
      counts: expect.objectContaining({ deleted: 0, failed: 1 }),
      failures: [{ path: 'a.md', reason: 'legal_hold' }],
    });
    expect(await exists(synced!.id)).toBe(true);
    store.destroy();
  });

  it('deletes a document expiring in about a second, keeps a held one, and previews both', async () => {
    await kb('expiring');
    const soon = new Date(Date.now() + 1000).toISOString();
    const expiring = await upload({ knowledgeBaseIds: ['expiring'], expiresAt: soon });
    const held = await upload({ knowledgeBaseIds: ['expiring'], tags: ['case-4'] });
    await place({ name: 'Case 4', where: { tags: 'case-4' } });
    const dated = await api(`/v1/documents/${held}`, {
      method: 'PATCH',
      body: { expiresAt: soon },
    });
    expect(dated.body['expiresAt']).toBe(soon);

    await waitFor(
      () => exists(expiring),
      (present) => !present,
      30_000,
    );

    expect(await exists(held)).toBe(true);
    const preview = await api('/v1/knowledge-bases/expiring/retention/preview');
    expect(preview.body).toMatchObject({
      deletes: [],
      held: [expect.objectContaining({ id: held, hold: 'Case 4', reason: 'legal_hold' })],
    });
    // A policy of its own: one day after upload, nothing is due yet.
    const policy = await api('/v1/knowledge-bases/expiring', {
      method: 'PATCH',
      body: { retentionDays: 1 },
    });
    expect(policy.body).toMatchObject({ retentionDays: 1, retentionFrom: 'uploaded' });
  });

  it('erases what a user uploaded as one job, skipping and counting held documents', async () => {
    const mallory = { user: 'mallory', roles: ['editor'] };
    const first = await upload({}, mallory);
    const second = await upload({ tags: ['case-5'] }, mallory);
    await place({ name: 'Case 5', where: { tags: 'case-5' } });

    const job = await api('/v1/erasures', { method: 'POST', body: { uploadedBy: 'mallory' } });
    expect(job.status).toBe(202);
    const done = await waitFor(
      () => api(`/v1/erasures/${String(job.body['id'])}`),
      (j) => j.body['status'] !== 'running',
      30_000,
    );

    expect(done.body).toMatchObject({
      status: 'succeeded',
      deleted: 1,
      held: 1,
      heldReason: 'legal_hold',
    });
    expect(await exists(first)).toBe(false);
    expect(await exists(second)).toBe(true);
  });

  it('places, lists and releases holds with the built CLI', async () => {
    const run = promisify(execFile);
    const kbCli = ['apps/kb-cli/dist/main.js'];
    const env = {
      ...process.env,
      KB_DOCUMENTS_URL: suite.documentUrl,
      KB_TOKEN: (await suite.auth(ADMIN)).authorization.slice('Bearer '.length),
    };
    const placed = await run(
      'node',
      [...kbCli, 'holds', 'place', '--name', 'CLI hold', '--where', '{"tags":"cli"}', '--json'],
      { env },
    );
    const hold = JSON.parse(placed.stdout) as { id: string; scope: string };
    expect(hold.scope).toBe('filter');
    const listed = await run('node', [...kbCli, 'holds', 'list'], { env });
    expect(listed.stdout).toContain('CLI hold');
    const released = await run(
      'node',
      [...kbCli, 'holds', 'release', hold.id, '--reason', 'done', '--json'],
      { env },
    );
    expect(JSON.parse(released.stdout)).toMatchObject({ state: 'released' });
  });
});
