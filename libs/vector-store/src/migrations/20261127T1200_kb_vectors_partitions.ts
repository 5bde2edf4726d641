import { type Kysely, type Migration, sql } from 'kysely';

/** The function that creates a namespace's partition (`${table}_partition(namespace)`). */
export const partitionFunction = (table: string): string => `${table}_partition`;

/**
 * One partition per namespace (index space), each with its own HNSW index, and the vectors stored
 * inline (docs/adr/0029). Before, one HNSW index served every namespace with the namespace as a
 * filter, and pgvector's `vector` type (storage EXTERNAL) put each embedding out of line in TOAST
 * beside the chunk text: for a tenant of 1,911 chunks among others the planner scanned the
 * tenant's rows and fetched every vector from TOAST (13–14 ms, ~7 µs a row) rather than use an
 * index built over everyone's vectors. Now a query prunes to its namespace's partition, whose
 * HNSW graph holds only that namespace's vectors, and a scan reads vectors from the heap page.
 *
 * The existing rows move into the new layout: the old table is renamed, a partition is created
 * for each of its namespaces, the rows are copied, the indexes are built, the old table dropped.
 */
export const kbVectorsPartitions = (table: string): Migration => ({
  async up(db: Kysely<unknown>): Promise<void> {
    const old = `${table}_unpartitioned`;
    const fn = partitionFunction(table);
    const dimension = await sql<{ dimension: number }>`
      SELECT atttypmod AS dimension FROM pg_attribute
       WHERE attrelid = ${table}::regclass AND attname = 'embedding'`.execute(db);
    const dim = dimension.rows[0]!.dimension;
    await sql`DROP INDEX IF EXISTS ${sql.id(`${table}_hnsw`)}`.execute(db);
    await sql`DROP INDEX IF EXISTS ${sql.id(`${table}_document`)}`.execute(db);
    await sql`ALTER TABLE ${sql.table(table)} RENAME TO ${sql.id(old)}`.execute(db);
    await sql`ALTER TABLE ${sql.table(old)} RENAME CONSTRAINT ${sql.id(`${table}_pkey`)} TO ${sql.id(`${old}_pkey`)}`.execute(
      db,
    );
    await sql`
      CREATE TABLE ${sql.table(table)} (
        namespace text NOT NULL,
        id text NOT NULL,
        document_id text NOT NULL,
        document_version integer NOT NULL,
        chunk_index integer NOT NULL,
        title text NOT NULL,
        text text NOT NULL,
        start_offset integer NOT NULL,
        end_offset integer NOT NULL,
        embedding vector(${sql.lit(dim)}) STORAGE PLAIN NOT NULL,
        kb_ids text[] NOT NULL DEFAULT '{}',
        tags text[] NOT NULL DEFAULT '{}',
        uploaded_at bigint NOT NULL DEFAULT 0,
        metadata jsonb NOT NULL DEFAULT '{}',
        principals text[] NOT NULL DEFAULT '{}',
        PRIMARY KEY (namespace, id)
      ) PARTITION BY LIST (namespace)`.execute(db);
    // Partitions are named by a digest of the namespace (namespaces may hold any character);
    // an advisory lock serializes writers creating the same one.
    await sql
      .raw(
        `CREATE OR REPLACE FUNCTION ${quote(fn)}(ns text) RETURNS void LANGUAGE plpgsql AS $$
         DECLARE part text := ${literal(`${table}_p_`)} || left(md5(ns), 24);
         BEGIN
           IF to_regclass(quote_ident(part)) IS NOT NULL THEN RETURN; END IF;
           PERFORM pg_advisory_xact_lock(hashtext(${literal(table)}));
           IF to_regclass(quote_ident(part)) IS NOT NULL THEN RETURN; END IF;
           EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES IN (%L)', part, ${literal(table)}, ns);
           EXECUTE format('ALTER TABLE %I ALTER COLUMN embedding SET STORAGE PLAIN', part);
         END $$`,
      )
      .execute(db);
    await sql`SELECT ${sql.raw(quote(fn))}(namespace) FROM (SELECT DISTINCT namespace FROM ${sql.table(old)}) n`.execute(
      db,
    );
    await sql`
      INSERT INTO ${sql.table(table)} (namespace, id, document_id, document_version, chunk_index,
             title, text, start_offset, end_offset, embedding, kb_ids, tags, uploaded_at, metadata,
             principals)
      SELECT namespace, id, document_id, document_version, chunk_index, title, text, start_offset,
             end_offset, embedding, kb_ids, tags, uploaded_at, metadata, principals
        FROM ${sql.table(old)}`.execute(db);
    await sql`DROP TABLE ${sql.table(old)}`.execute(db);
    await sql`
      CREATE INDEX ${sql.id(`${table}_document`)} ON ${sql.table(table)} (namespace, document_id)`.execute(
      db,
    );
    await sql`
      CREATE INDEX ${sql.id(`${table}_hnsw`)} ON ${sql.table(table)}
        USING hnsw (embedding vector_cosine_ops)`.execute(db);
    await sql`ANALYZE ${sql.table(table)}`.execute(db);
  },
});

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;
