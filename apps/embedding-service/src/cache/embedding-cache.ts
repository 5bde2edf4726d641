import { embedInBatches, type EmbedContext, type EmbeddingProvider } from '@kb/embeddings';
import { meter } from '@kb/observability';
import { Logger } from '@nestjs/common';
import { sql, type Kysely, type Migration } from 'kysely';
import type { Migrations } from '@kb/database';

/** Postgres schema of the embedding cache (embedding-service migrates it). */
export const CACHE_SCHEMA = 'embedding_cache';

export const cacheMigrations: Migrations = {
  '20261123T1400_embeddings': {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`
        CREATE TABLE embeddings (
          model text NOT NULL,
          sha256 text NOT NULL,
          vector bytea NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (model, sha256)
        )`.execute(db);
    },
  } satisfies Migration,
};

const lookups = meter().createCounter('kb_embedding_cache_lookups_total', {
  description: 'Chunks looked up in the embedding cache, by model and outcome (hit or miss)',
});
const modelCalls = meter().createCounter('kb_embedding_model_calls_total', {
  description: 'Batches sent to the embedding model, by model',
});

/** Vectors by (model, SHA-256 of the chunk text), shared by every tenant, document and version. */
export class PgEmbeddingCache {
  constructor(private readonly db: Kysely<unknown>) {}

  async get(model: string, hashes: string[]): Promise<Map<string, number[]>> {
    if (hashes.length === 0) return new Map();
    const { rows } = await sql<{ sha256: string; vector: Buffer }>`
      SELECT sha256, vector FROM embeddings
       WHERE model = ${model} AND sha256 = ANY(${hashes}::text[])`.execute(this.db);
    return new Map(rows.map((row) => [row.sha256, fromBytes(row.vector)]));
  }

  async put(model: string, entries: Array<{ sha256: string; vector: number[] }>): Promise<void> {
    if (entries.length === 0) return;
    await sql`
      INSERT INTO embeddings (model, sha256, vector)
      SELECT ${model}, e.sha256, decode(e.vector, 'base64')
        FROM jsonb_to_recordset(${JSON.stringify(
          entries.map((e) => ({ sha256: e.sha256, vector: toBytes(e.vector).toString('base64') })),
        )}::jsonb) AS e(sha256 text, vector text)
      ON CONFLICT (model, sha256) DO NOTHING`.execute(this.db);
  }
}

/** Float32, little-endian: 4 bytes a dimension, the precision the model computes in. */
const toBytes = (vector: number[]): Buffer => Buffer.from(new Float32Array(vector).buffer);
const fromBytes = (bytes: Buffer): number[] =>
  Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));

/**
 * Embeds chunks through the cache: only texts the model has not embedded before (for this model)
 * reach it, in batches; identical texts within a document are embedded once. A cache outage costs
 * model time, never the document.
 */
export class CachedEmbedder {
  private readonly logger = new Logger(CachedEmbedder.name);

  constructor(
    readonly provider: EmbeddingProvider,
    private readonly cache: PgEmbeddingCache | null,
    private readonly batchSize: number,
  ) {}

  async embed(
    chunks: Array<{ sha256: string; text: string }>,
    context?: EmbedContext,
  ): Promise<number[][]> {
    const model = this.provider.model;
    let cached = new Map<string, number[]>();
    if (this.cache) {
      try {
        cached = await this.cache.get(model, [...new Set(chunks.map((c) => c.sha256))]);
      } catch (error) {
        this.logger.warn(`embedding cache unavailable, embedding everything: ${String(error)}`);
      }
    }
    const uncached = chunks.filter((c) => !cached.has(c.sha256));
    lookups.add(chunks.length - uncached.length, { model, outcome: 'hit' });
    lookups.add(uncached.length, { model, outcome: 'miss' });
    const missing = [...new Map(uncached.map((c) => [c.sha256, c])).values()];
    if (missing.length > 0) {
      modelCalls.add(Math.ceil(missing.length / this.batchSize), { model });
      const vectors = await embedInBatches(
        this.provider,
        missing.map((c) => c.text),
        this.batchSize,
        context,
      );
      const fresh = missing.map((c, i) => ({ sha256: c.sha256, vector: vectors[i]! }));
      for (const entry of fresh) cached.set(entry.sha256, entry.vector);
      await this.cache?.put(model, fresh).catch((error: unknown) => {
        this.logger.warn(`embedding cache write failed: ${String(error)}`);
      });
    }
    return chunks.map((c) => cached.get(c.sha256)!);
  }
}
