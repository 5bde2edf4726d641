import { createHash, randomUUID } from 'node:crypto';

import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { TestEmbeddingProvider } from '@kb/embeddings';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import { CachedEmbedder } from '../src/cache/cached.embedder';
import { type EmbeddingCache, PgEmbeddingCache } from '../src/cache/embedding-cache.repository';
import { cacheMigrations } from '../src/migrations';
import type { DB } from '../src/platform/db.generated';

jest.setTimeout(30_000);

const chunk = (text: string) => ({ text, sha256: createHash('sha256').update(text).digest('hex') });

/** The embedding cache over real Postgres, in a throw-away schema. */
describe('CachedEmbedder', () => {
  const schema = `embcache_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  let pool: Pool;
  let db: Kysely<DB>;
  let cache: PgEmbeddingCache;

  beforeAll(async () => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 2 });
    db = createDatabase<DB>(pool);
    await migrateToLatest(db, schema, cacheMigrations);
    cache = new PgEmbeddingCache(db);
  });

  afterAll(async () => {
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  it('calls the model only for texts it has not embedded, across documents, and returns the same vectors', async () => {
    const provider = new TestEmbeddingProvider(16);
    const embed = jest.spyOn(provider, 'embed');
    const embedder = new CachedEmbedder(provider, cache, 2);
    const first = await embedder.embed([chunk('alpha'), chunk('beta'), chunk('alpha')]);
    expect(embed.mock.calls.map((c) => c[0])).toEqual([['alpha', 'beta']]); // the repeat once
    // Another document (or version, or tenant) with one new and one known text.
    const second = await embedder.embed([chunk('beta'), chunk('gamma')]);
    expect(embed.mock.calls.slice(1).map((c) => c[0])).toEqual([['gamma']]);
    expect(second[0]).toEqual(first[1]);
    expect(first[0]).toEqual(first[2]);
    // Unchanged text: no model call at all.
    await embedder.embed([chunk('gamma'), chunk('alpha')]);
    expect(embed).toHaveBeenCalledTimes(2);
    // Stored as float32: what comes back is what the model gave, to float32 precision.
    const [fresh] = await provider.embed(['alpha']);
    first[0]!.forEach((v, i) => expect(v).toBeCloseTo(fresh![i]!, 6));
  });

  it('keys by model: another model embeds the same text again', async () => {
    const other = new TestEmbeddingProvider(8);
    const embed = jest.spyOn(other, 'embed');
    await new CachedEmbedder(other, cache, 8).embed([chunk('alpha')]);
    expect(embed).toHaveBeenCalledTimes(1);
  });

  it('passes the tenant on to the provider, whose rate limit is per tenant', async () => {
    const provider = new TestEmbeddingProvider(16);
    const embed = jest.spyOn(provider, 'embed');
    await new CachedEmbedder(provider, cache, 4).embed([chunk('tenant scoped text')], {
      tenantId: 'tenant-7',
    });
    expect(embed).toHaveBeenCalledWith(['tenant scoped text'], { tenantId: 'tenant-7' });
  });

  it('embeds everything when the cache is unreachable', async () => {
    const provider = new TestEmbeddingProvider(16);
    const broken: EmbeddingCache = {
      get: async () => Promise.reject(new Error('down')),
      put: async () => Promise.reject(new Error('down')),
    };
    const vectors = await new CachedEmbedder(provider, broken, 4).embed([chunk('delta')]);
    expect(vectors).toEqual(await provider.embed(['delta']));
  });
});
