/**
 * Deletion that deletes (docs/adr/0019): after a document is replaced and then deleted, no store
 * the suite runs on still holds its text. A word made up for the run is looked for in every
 * object of the bucket written since the word was made (other tenants' folders aside), every row
 * of every table of every database, and every Redis value.
 */
import { randomUUID } from 'node:crypto';

import { Client } from 'pg';
import { createClient } from 'redis';

import { useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(240_000);

describe('deletion', () => {
  const suite = useSuite('deletion', 4800);

  /**
   * Keys of the objects that may hold a word made up at `since`: written at or after it (S3 keeps
   * whole seconds), loose anywhere in the first two levels or under this suite's tenants' folders
   * (`blobs/<tenant>/…`, `derived/<tenant>/…`). Other tenants' folders are skipped: listing a whole
   * bucket that earlier runs filled (28,879 objects on a developer's machine) took 92 s.
   */
  async function writtenSince(since: Date): Promise<string[]> {
    const recent = (entries: Array<{ key: string; lastModified: Date | null }>) =>
      entries
        .filter((e) => !e.lastModified || e.lastModified.getTime() >= since.getTime() - 2_000)
        .map((e) => e.key);
    const top = await suite.blobs.listLevel('');
    const keys = recent(top.entries);
    for (const area of top.folders) {
      const level = await suite.blobs.listLevel(area);
      keys.push(...recent(level.entries));
      for (const folder of level.folders) {
        if (folder.slice(area.length).startsWith(suite.tenant)) {
          keys.push(...recent(await suite.blobs.listEntries(folder)));
        }
      }
    }
    return keys;
  }

  /** Where the marker still is: S3 keys, `database.schema.table` names, Redis keys. */
  async function holders(marker: string, since: Date): Promise<string[]> {
    const found: string[] = [];
    for (const key of await writtenSince(since)) {
      // Deleted between the listing and the read: gone, as it should be.
      const body = await suite.blobs
        .get(key)
        .catch(async (error: unknown) =>
          (await suite.blobs.exists(key)) ? Promise.reject(error) : undefined,
        );
      if (body?.toString('utf8').includes(marker)) found.push(`s3:${key}`);
    }
    const url = new URL(suite.env['DATABASE_URL']!);
    const admin = new Client({ connectionString: url.toString() });
    await admin.connect();
    const { rows: databases } = await admin.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE NOT datistemplate',
    );
    await admin.end();
    for (const { datname } of databases) {
      url.pathname = `/${datname}`;
      const db = new Client({ connectionString: url.toString() });
      await db.connect();
      try {
        const { rows: tables } = await db.query<{ name: string }>(
          `SELECT format('%I.%I', table_schema, table_name) AS name FROM information_schema.tables
            WHERE table_type = 'BASE TABLE'
              AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
        );
        for (const { name } of tables) {
          const { rows } = await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM ${name} t WHERE strpos(t::text, $1) > 0`,
            [marker],
          );
          if (rows[0]!.n > 0) found.push(`postgres:${datname}.${name}`);
        }
      } finally {
        await db.end();
      }
    }
    const redis = createClient({ url: suite.env['REDIS_URL']! });
    await redis.connect();
    try {
      for await (const keys of redis.scanIterator({ COUNT: 500 })) {
        for (const key of keys) {
          const value = (await redis.type(key)) === 'string' ? await redis.get(key) : key;
          if (key.includes(marker) || value?.includes(marker)) found.push(`redis:${key}`);
        }
      }
    } finally {
      await redis.close();
    }
    return found;
  }

  // Not the marker itself: the audit log keeps each search's query, the caller's own words (and
  // the ids of the chunks it returned), by design.
  const lexicalSearch = () =>
    suite.search({ query: 'billing system finance team', topK: 5, mode: 'lexical' });

  it('leaves none of a deleted document’s text in S3, Postgres, either index or Redis', async () => {
    const since = new Date();
    const marker = `zqv${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const body = (version: number) =>
      [
        `# Version ${version} of the ${marker} memo`,
        '',
        `The ${marker} project replaces the old billing system in spring. `.repeat(6),
        '',
        `Questions about ${marker} go to the finance team, version ${version}. `.repeat(6),
      ].join('\n');
    const created = (await (await suite.upload('memo.md', body(1), 'text/markdown')).json()) as {
      id: string;
    };
    await waitFor(
      () => suite.getDocument(created.id),
      (d) => d.status === 'indexed',
      60_000,
    );
    expect((await lexicalSearch()).hits.map((h) => h.documentId)).toContain(created.id);

    const form = new FormData();
    form.append('file', new Blob([body(2)], { type: 'text/markdown' }), 'memo-v2.md');
    const replaced = await fetch(`${suite.documentUrl}/v1/documents/${created.id}/content`, {
      method: 'PUT',
      body: form,
      headers: await suite.auth(),
    });
    expect(replaced.status).toBe(202);
    await waitFor(
      () => suite.getDocument(created.id),
      (d) => d.status === 'indexed' && d['version'] === 2,
      60_000,
    );
    // Version 1's derived objects went once version 2 was indexed. A memo's chunks and vectors
    // are small enough to travel in the events: only its extracted text is stored, as UTF-8 and
    // the index a window is read through (ADR 32).
    const derived = `derived/${suite.tenant}/${created.id}/`;
    const v2Only = await waitFor(
      () => suite.blobs.list(derived),
      (keys) => keys.length > 0 && keys.every((key) => key.startsWith(`${derived}v2/`)),
      30_000,
    );
    expect(v2Only).toEqual([`${derived}v2/text.index.json`, `${derived}v2/text.txt`]);
    // A cached answer holding the text, and every store holding it before the delete.
    const cached = await lexicalSearch();
    expect(cached.hits.map((h) => h.documentId)).toContain(created.id);
    expect((await lexicalSearch()).cache).toBe('hit');
    const before = await holders(marker, since);
    expect(before.some((h) => h.startsWith('s3:blobs/'))).toBe(true);
    expect(before.some((h) => h.startsWith(`s3:${derived}`))).toBe(true);
    expect(before.some((h) => h.startsWith('redis:'))).toBe(true);
    expect(before.filter((h) => h.startsWith('postgres:')).sort()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^postgres:kb\.search_index\.chunks$/),
        expect.stringMatching(/^postgres:kb_vectors\./),
      ]),
    );

    const deleted = await fetch(`${suite.documentUrl}/v1/documents/${created.id}`, {
      method: 'DELETE',
      headers: await suite.auth(),
    });
    expect(deleted.status).toBe(200);
    expect(
      await waitFor(
        () => holders(marker, since),
        (found) => found.length === 0,
        60_000,
      ),
    ).toEqual([]);
    expect((await lexicalSearch()).hits.map((h) => h.documentId)).not.toContain(created.id);
  });
});
