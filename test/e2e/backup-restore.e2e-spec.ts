/**
 * The backup and restore drill (docs/adr/0040). Ingest a part of CISI with ACLs (one document
 * readable only by a group of acl-service's policy), a webhook subscription; run 20 searches and
 * keep their top 10; `kb admin backup`; wipe the drill's servers' state (databases dropped, bucket
 * emptied, Redis flushed); `kb admin restore`; start the services; `kb admin repair`. Then the same
 * searches return the same top 10, every document is `indexed`, the ACLs, the policy and the
 * subscription are unchanged, and no document or chunk is lost or duplicated.
 *
 * It touches only its own state (test/support/drill.ts): databases kb_drill and kb_drill_vectors,
 * the bucket kb-drill, Redis database 9. Kafka topics cannot be prefixed, so its services read the
 * shared topics under consumer groups of their own, set to the topics' ends before they start:
 * they replay nothing and take no message from another run's groups; every assertion names the
 * drill's tenant, whose id is new each run, so no other test's event can be mistaken for its own.
 *
 * KB_DRILL_DOCUMENTS: how many CISI documents (100 by default; `all` for the 1,460, as
 * `npm run bench -- drill` runs it). Each phase's duration is printed at the end.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  aclUrl,
  count,
  documentUrl,
  dropDatabases,
  emptyBucket,
  flushRedis,
  forgetGroups,
  groupsAtTopicEnds,
  kb,
  loadCorpus,
  METADATA_DB,
  phase,
  queryUrl,
  SECRET_GROUP,
  sql,
  startDrillServices,
  stopDrillServices,
  store,
  timings,
  VECTORS_DB,
  webhookUrl,
} from '../support/drill';
import { testToken } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(3_600_000);

interface DocumentView {
  id: string;
  status: string;
  version: number;
  acl: unknown;
  chunkCount: number | null;
  title: string;
}

describe('backup and restore drill', () => {
  const tenant = `drill-${randomUUID().slice(0, 8)}`;
  const corpus = loadCorpus();
  const work = mkdtempSync(join(tmpdir(), 'kb-drill-'));
  const backupDir = join(work, 'backup');
  const auth = async (user: string, roles: string[]) => ({
    authorization: `Bearer ${await testToken({ tenant, user, roles })}`,
  });

  beforeAll(async () => {
    await dropDatabases();
    await sql('postgres', `CREATE DATABASE ${METADATA_DB}`, `CREATE DATABASE ${VECTORS_DB}`);
    await sql(VECTORS_DB, 'CREATE EXTENSION IF NOT EXISTS vector');
    await emptyBucket();
    await flushRedis();
    await groupsAtTopicEnds();
    await startDrillServices();
  });

  afterAll(async () => {
    await stopDrillServices();
    await dropDatabases();
    await emptyBucket().catch(() => undefined);
    store.destroy();
    await flushRedis();
    await forgetGroups();
    // The next suite's services must not spend minutes on the drill's events (test/support/drill.ts).
    await groupsAtTopicEnds(true);
    rmSync(work, { recursive: true, force: true });
    const total = timings.reduce((sum, [, ms]) => sum + ms, 0);
    process.stdout.write(
      `backup/restore drill, ${corpus.docs.length} CISI documents:\n${timings
        .map(([name, ms]) => `  ${name.padEnd(28)} ${(ms / 1000).toFixed(1).padStart(8)} s\n`)
        .join('')}  ${'total'.padEnd(28)} ${(total / 1000).toFixed(1).padStart(8)} s\n`,
    );
  });

  const call = async (url: string, init: RequestInit & { as: Record<string, string> }) => {
    const response = await fetch(url, {
      ...init,
      headers: { 'content-type': 'application/json', ...init.as },
    });
    return { status: response.status, body: (await response.json().catch(() => ({}))) as never };
  };

  /** Every document of the tenant, as its admin lists them, by id. */
  async function listAll(): Promise<DocumentView[]> {
    const as = await auth('drill-admin', ['admin']);
    const items: DocumentView[] = [];
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams({ limit: '1000', ...(cursor ? { cursor } : {}) });
      const page: { status: number; body: { items: DocumentView[]; nextCursor: string | null } } =
        await call(`${documentUrl}/v1/documents?${query}`, { as });
      expect(page.status).toBe(200);
      items.push(...page.body.items);
      cursor = page.body.nextCursor;
    } while (cursor);
    return items.sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Each query's top 10 as `document#chunk`, for a caller. */
  async function topTens(as: Record<string, string>): Promise<string[][]> {
    const answers: string[][] = [];
    for (const query of corpus.queries) {
      const { status, body } = await call(`${queryUrl}/v1/search`, {
        method: 'POST',
        as,
        body: JSON.stringify({ query: query.text, topK: 10 }),
      });
      expect(status).toBe(200);
      const hits = (body as { hits: Array<{ documentId: string; chunkIndex: number }> }).hits;
      answers.push(hits.map((hit) => `${hit.documentId}#${hit.chunkIndex}`));
    }
    return answers;
  }

  /** Whether a search for the restricted document's title finds it, for a caller. */
  async function findsRestricted(restrictedId: string, as: Record<string, string>) {
    const { body } = await call(`${queryUrl}/v1/search`, {
      method: 'POST',
      as,
      body: JSON.stringify({ query: corpus.docs[0]!.title, topK: 10 }),
    });
    return (body as { hits: Array<{ documentId: string }> }).hits.some(
      (hit) => hit.documentId === restrictedId,
    );
  }

  /** What must survive: chunks in both indexes, the embedding cache, the policy, the webhooks. */
  async function stores() {
    const admin = await auth('drill-admin', ['admin']);
    return {
      lexicalChunks: await count(
        METADATA_DB,
        `SELECT count(*) AS n FROM search_index.chunks WHERE tenant_id LIKE '${tenant}%'`,
      ),
      vectors: await count(
        VECTORS_DB,
        `SELECT count(*) AS n FROM kb_vectors_384 WHERE namespace LIKE '${tenant}%'`,
      ),
      cachedEmbeddings: await count(
        METADATA_DB,
        'SELECT count(*) AS n FROM embedding_cache.embeddings',
      ),
      policy: (await call(`${aclUrl}/v1/acl/policy`, { as: admin })).body as unknown,
      webhooks: (await call(`${webhookUrl}/v1/webhooks`, { as: admin })).body as unknown,
    };
  }

  const generation = () =>
    count(
      METADATA_DB,
      `SELECT coalesce(max(generation), 0) AS n FROM search_index.generations WHERE tenant_id = '${tenant}'`,
    );

  it('restores what was backed up, and the repair rebuilds the rest from the originals', async () => {
    const admin = await auth('drill-admin', ['admin']);
    const loader = await auth('loader', ['editor']);
    const reader = await auth('reader', ['viewer']);
    const member = await auth('member', ['viewer']);

    // ---------------------------------------------------------------- ingest
    const ids = await phase('ingest', async () => {
      const joined = await call(`${aclUrl}/v1/acl/groups/${SECRET_GROUP}/members`, {
        method: 'POST',
        as: admin,
        body: JSON.stringify({ user: 'member' }),
      });
      expect(joined.status).toBe(200);
      const hook = await call(`${webhookUrl}/v1/webhooks`, {
        method: 'POST',
        as: admin,
        body: JSON.stringify({ url: 'http://127.0.0.1:9/drill', events: ['document.deleted'] }),
      });
      expect(hook.status).toBe(201);
      const uploaded: string[] = new Array<string>(corpus.docs.length);
      let next = 0;
      const uploader = async () => {
        while (next < corpus.docs.length) {
          const i = next++;
          const doc = corpus.docs[i]!;
          const form = new FormData();
          form.append(
            'file',
            new Blob([`${doc.title}\n\n${doc.text}`], { type: 'text/plain' }),
            `cisi-${doc._id}.txt`,
          );
          form.append('title', doc.title);
          form.append(
            'acl',
            JSON.stringify(i === 0 ? { groups: [SECRET_GROUP] } : { tenant: true }),
          );
          const response = await fetch(`${documentUrl}/v1/documents`, {
            method: 'POST',
            body: form,
            headers: loader,
          });
          const body = (await response.json()) as { id: string };
          expect(response.status).toBeLessThan(300);
          uploaded[i] = body.id;
        }
      };
      await Promise.all(Array.from({ length: 4 }, uploader));
      // Entries with the same text are one document (duplicate detection): two in the whole of
      // CISI, whose drill waited for 1,460 documents that were 1,458.
      const distinct = [...new Set(uploaded)];
      await waitFor(
        listAll,
        (docs) => docs.length === distinct.length && docs.every((d) => d.status === 'indexed'),
        Math.max(180_000, corpus.docs.length * 1_000),
        2_000,
      );
      return distinct;
    });
    const restrictedId = ids[0]!;

    // ---------------------------------------------------------------- before
    const before = await phase('20 searches (before)', async () => ({
      documents: await listAll(),
      searches: await topTens(reader),
      stores: await stores(),
      memberFinds: await findsRestricted(restrictedId, member),
      readerFinds: await findsRestricted(restrictedId, reader),
    }));
    expect(before.documents.map((d) => d.id).sort()).toEqual([...ids].sort());
    expect(before.memberFinds).toBe(true);
    expect(before.readerFinds).toBe(false);
    expect(before.searches.flat().some((hit) => hit.startsWith(restrictedId))).toBe(false);
    expect(before.stores.lexicalChunks).toBeGreaterThanOrEqual(ids.length);

    // ---------------------------------------------------------------- backup
    const manifest = await phase('kb admin backup', async () =>
      JSON.parse(await kb('admin', 'backup', backupDir, '--json')),
    );
    expect(manifest.objects.count).toBe(ids.length);
    expect(manifest.tenants).toContain(tenant);

    // ---------------------------------------------------------------- wipe
    await phase('stop and wipe', async () => {
      await stopDrillServices();
      await dropDatabases();
      await emptyBucket();
      await flushRedis();
    });
    expect(
      await count(
        'postgres',
        `SELECT count(*) AS n FROM pg_database WHERE datname IN ('${METADATA_DB}', '${VECTORS_DB}')`,
      ),
    ).toBe(0);
    expect(await store.list('')).toEqual([]);

    // ---------------------------------------------------------------- restore
    await phase('kb admin restore', async () => {
      await sql('postgres', `CREATE DATABASE ${METADATA_DB}`, `CREATE DATABASE ${VECTORS_DB}`);
      await kb('admin', 'restore', backupDir);
    });
    // Refused, before anything changes: a backup from a newer schema, and a non-empty target.
    const newer = join(work, 'newer');
    mkdirSync(newer);
    for (const entry of ['postgres', 'objects', 'objects.jsonl']) {
      symlinkSync(join(backupDir, entry), join(newer, entry));
    }
    const future = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8'));
    future.databases[0].migrations['document_service.kysely_migration'].push(
      '29991231T2359_future',
    );
    writeFileSync(join(newer, 'manifest.json'), JSON.stringify(future));
    await expect(kb('admin', 'restore', newer, '--replace')).rejects.toThrow(/newer schema/);
    await expect(kb('admin', 'restore', backupDir)).rejects.toThrow(/holds \d+ tables/);

    // ---------------------------------------------------------------- repair
    await phase('start services', startDrillServices);
    const someone = ids[1]!;
    const textBefore = await call(`${documentUrl}/v1/documents/${someone}/text`, { as: admin });
    expect(textBefore.status).toBe(409); // the extracted text is derived: not in the backup
    const generationBefore = await generation();
    await phase('kb admin repair (and wait)', async () => {
      const repaired = JSON.parse(
        await kb('admin', 'repair', '--tenant', tenant, '--documents-url', documentUrl, '--json'),
      );
      expect(repaired.repaired[tenant]).toBe(ids.length);
      // Every document re-indexed: indexing-service bumps the generation once per write.
      await waitFor(
        generation,
        (g) => g >= generationBefore + ids.length,
        Math.max(180_000, ids.length * 1_000),
        2_000,
      );
    });
    expect((await call(`${documentUrl}/v1/documents/${someone}/text`, { as: admin })).status).toBe(
      200,
    );

    // ---------------------------------------------------------------- after
    const after = await phase('20 searches (after)', async () => ({
      documents: await listAll(),
      searches: await topTens(reader),
      stores: await stores(),
      memberFinds: await findsRestricted(restrictedId, member),
      readerFinds: await findsRestricted(restrictedId, reader),
    }));
    // 0 lost, 0 duplicated, every one indexed, the ACLs as they were.
    expect(after.documents.map((d) => d.id)).toEqual(before.documents.map((d) => d.id));
    expect(new Set(after.documents.map((d) => d.id)).size).toBe(ids.length);
    expect(after.documents.filter((d) => d.status !== 'indexed')).toEqual([]);
    const essentials = (docs: DocumentView[]) =>
      docs.map(({ id, version, acl, chunkCount, title }) => ({
        id,
        version,
        acl,
        chunkCount,
        title,
      }));
    expect(essentials(after.documents)).toEqual(essentials(before.documents));
    const { cachedEmbeddings, ...restored } = after.stores;
    const { cachedEmbeddings: cachedBefore, ...backedUp } = before.stores;
    expect(restored).toEqual(backedUp);
    // Other runs' events read on the shared topics may add entries; none may be missing.
    expect(cachedEmbeddings).toBeGreaterThanOrEqual(cachedBefore);
    // The same top 10 for the same 20 searches; the restricted document still hidden.
    expect(after.searches).toEqual(before.searches);
    expect(after.memberFinds).toBe(true);
    expect(after.readerFinds).toBe(false);
  });
});
