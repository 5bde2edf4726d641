import { type Kysely, type Migration, sql } from 'kysely';

/**
 * The table of one dimension's vectors, with its lookup and HNSW cosine indexes. `IF NOT EXISTS`
 * throughout: databases from before these migrations already hold the table, created by the
 * store's boot-time DDL, and take the history over without a change.
 */
export const kbVectors = (table: string, dimension: number): Migration => ({
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`CREATE EXTENSION IF NOT EXISTS vector`.execute(db);
    await sql`
      CREATE TABLE IF NOT EXISTS ${sql.table(table)} (
        namespace text NOT NULL,
        id text NOT NULL,
        document_id text NOT NULL,
        document_version integer NOT NULL,
        chunk_index integer NOT NULL,
        title text NOT NULL,
        text text NOT NULL,
        start_offset integer NOT NULL,
        end_offset integer NOT NULL,
        embedding vector(${sql.lit(dimension)}) NOT NULL,
        PRIMARY KEY (namespace, id)
      )`.execute(db);
    await sql`
      CREATE INDEX IF NOT EXISTS ${sql.id(`${table}_document`)}
        ON ${sql.table(table)} (namespace, document_id)`.execute(db);
    await sql`
      CREATE INDEX IF NOT EXISTS ${sql.id(`${table}_hnsw`)}
        ON ${sql.table(table)} USING hnsw (embedding vector_cosine_ops)`.execute(db);
  },
});
