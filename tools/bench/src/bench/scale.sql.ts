/**
 * The SQL that writes a scaled tenant (scale.ts). Parameters of the copy statements: $1 the
 * source tenant, $2 the target, $3 and $4 the first and last copy of the batch.
 */

/**
 * A batch of copies into the lexical index: each chunk row with the tsvector and length the
 * triggers computed for its source, then the source's postings under the copy's document id
 * (what the `chunks_postings` trigger writes for that text), in key order for the B-tree.
 */
export function lexicalCopies(): string[] {
  return [
    `INSERT INTO search_index.chunks (tenant_id, document_id, document_version, chunk_index,
            title, text, start_offset, end_offset, tsv, doc_len, kb_ids, tags, uploaded_at,
            metadata, principals, page, heading_path)
     SELECT $2, 'c' || g || '-' || c.document_id, c.document_version, c.chunk_index, c.title, c.text,
            c.start_offset, c.end_offset, c.tsv, c.doc_len, c.kb_ids, c.tags, c.uploaded_at,
            c.metadata, c.principals, c.page, c.heading_path
       FROM search_index.chunks c CROSS JOIN generate_series($3::integer, $4::integer) g
      WHERE c.tenant_id = $1`,
    `INSERT INTO search_index.postings (tenant_id, lexeme, document_id, document_version,
            chunk_index, tf, doc_len)
     SELECT $2, p.lexeme, 'c' || g || '-' || p.document_id, p.document_version, p.chunk_index, p.tf,
            p.doc_len
       FROM search_index.postings p CROSS JOIN generate_series($3::integer, $4::integer) g
      WHERE p.tenant_id = $1
      ORDER BY p.lexeme, 'c' || g || '-' || p.document_id`,
  ];
}

/** A batch of copies into the tenant's detached partition, each vector nudged by ±0.01 a dimension. */
export function vectorCopies(table: string, partition: string): string {
  return `INSERT INTO "${partition}" (namespace, id, document_id, document_version, chunk_index,
            title, text, start_offset, end_offset, embedding, kb_ids, tags, uploaded_at, metadata,
            principals)
     SELECT $2, 'c' || g || '-' || v.document_id || '#' || v.document_version || '#' || v.chunk_index,
            'c' || g || '-' || v.document_id, v.document_version, v.chunk_index, v.title, v.text,
            v.start_offset, v.end_offset,
            (SELECT array_agg(x + (random()::real - 0.5) * 0.02 ORDER BY i)
               FROM unnest(v.embedding::real[]) WITH ORDINALITY AS u(x, i))::vector,
            v.kb_ids, v.tags, v.uploaded_at, v.metadata, v.principals
       FROM ${table} v CROSS JOIN generate_series($3::integer, $4::integer) g
      WHERE v.namespace = $1`;
}

/**
 * Once every row is in: the partition's indexes as `kb_vectors_<dimension>` declares them (so
 * ATTACH adopts them instead of building its own), then the attach, which the CHECK lets skip
 * its scan. Each statement can be repeated after an interruption.
 */
export function vectorIndexes(table: string, partition: string, namespace: string): string[] {
  const literal = `'${namespace.replaceAll("'", "''")}'`;
  return [
    `CREATE INDEX IF NOT EXISTS "${partition}_document" ON "${partition}" (namespace, document_id)`,
    `CREATE INDEX IF NOT EXISTS "${partition}_hnsw" ON "${partition}"
       USING hnsw (embedding vector_cosine_ops)`,
    `DO $$ BEGIN
       IF NOT (SELECT relispartition FROM pg_class WHERE oid = '"${partition}"'::regclass) THEN
         ALTER TABLE ${table} ATTACH PARTITION "${partition}" FOR VALUES IN (${literal});
       END IF;
     END $$`,
    `ALTER TABLE "${partition}" DROP CONSTRAINT IF EXISTS scale_namespace`,
    `ANALYZE "${partition}"`,
  ];
}
