import { type Kysely, sql } from 'kysely';

import type { DB } from '../platform/db.generated';

/** Vectors by (model, SHA-256 of the chunk text), shared by every tenant, document and version. */
export interface EmbeddingCache {
  get(model: string, hashes: string[]): Promise<Map<string, number[]>>;
  /** Entries already stored are left as they are (a vector of a text never changes). */
  put(model: string, entries: Array<{ sha256: string; vector: number[] }>): Promise<void>;
}

/** The embedding cache in Postgres (schema `embedding_cache`). */
export class PgEmbeddingCache implements EmbeddingCache {
  constructor(private readonly db: Kysely<DB>) {}

  async get(model: string, hashes: string[]): Promise<Map<string, number[]>> {
    if (hashes.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('embeddings')
      .select(['sha256', 'vector'])
      .where('model', '=', model)
      .where('sha256', '=', sql<string>`ANY(${hashes}::text[])`)
      .execute();
    return new Map(rows.map((row) => [row.sha256, fromBytes(row.vector)]));
  }

  async put(model: string, entries: Array<{ sha256: string; vector: number[] }>): Promise<void> {
    if (entries.length === 0) return;
    // One JSON parameter for the whole batch, not three a row (a batch may hold thousands).
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
