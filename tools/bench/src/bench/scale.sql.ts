/**
 * The SQL that writes a scaled tenant (scale.ts). Parameters of the copy statements: $1 the
 * source tenant, $2 the target, $3 and $4 the first and last copy of the batch.
 */

/**
 * Copy `copy`'s id of the document `id` (both SQL expressions): a UUID drawn from the two
 * (md5), so a copy is a document document-service can hold, and copies lie scattered in key
 * order as a real tenant's random ids do. Its version and variant digits are a v4's: the
 * events' schemas take RFC 9562 UUIDs only, and a bare md5 made every access snapshot of a
 * scaled tenant a dead letter in four services (`bench query` at ×500, 2026-11-28).
 */
export const copyId = (copy: string, id: string): string =>
  `overlay(overlay(md5(${copy} || '-' || ${id}) placing '4' from 13) placing '8' from 17)::uuid`;
const copyKey = (copy: string, id: string): string => `${copyId(copy, id)}::text`;

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
     SELECT $2, ${copyKey('g', 'c.document_id')}, c.document_version, c.chunk_index, c.title, c.text,
            c.start_offset, c.end_offset, c.tsv, c.doc_len, c.kb_ids, c.tags, c.uploaded_at,
            c.metadata, c.principals, c.page, c.heading_path
       FROM search_index.chunks c CROSS JOIN generate_series($3::integer, $4::integer) g
      WHERE c.tenant_id = $1`,
    `INSERT INTO search_index.postings (tenant_id, lexeme, document_id, document_version,
            chunk_index, tf, doc_len)
     SELECT $2, p.lexeme, ${copyKey('g', 'p.document_id')}, p.document_version, p.chunk_index, p.tf,
            p.doc_len
       FROM search_index.postings p CROSS JOIN generate_series($3::integer, $4::integer) g
      WHERE p.tenant_id = $1
      ORDER BY p.lexeme, ${copyKey('g', 'p.document_id')}`,
  ];
}

/**
 * A batch of copies into document-service's documents, so a search's hit details find them as
 * they find the source's (a copy whose document is unknown leaves the page as deleted): the
 * source's row under the copy's id, its blob shared, its external id (unique per tenant) and the
 * document it is attached to those of the copy. Written with the lexical rows, in the same
 * database and transaction.
 */
export function documentCopies(): string {
  return `INSERT INTO document_service.documents (id, tenant_id, title, filename, content_type,
            size_bytes, sha256, blob_key, version, status, failure_reason, failure_detail,
            chunk_count, metadata, stage_times, created_at, updated_at, tags, knowledge_base_ids,
            owner_id, acl, principals, redrives, explicit_knowledge_base_ids, meta_version,
            expires_at, pii_findings, attached_to, attachments_skipped, external_id, inactive)
     SELECT ${copyId('g', 'd.id::text')}, $2, d.title, d.filename, d.content_type, d.size_bytes,
            d.sha256, d.blob_key, d.version, d.status, d.failure_reason, d.failure_detail,
            d.chunk_count, d.metadata, d.stage_times, d.created_at, d.updated_at, d.tags,
            d.knowledge_base_ids, d.owner_id, d.acl, d.principals, d.redrives,
            d.explicit_knowledge_base_ids, d.meta_version, d.expires_at, d.pii_findings,
            CASE WHEN d.attached_to IS NOT NULL THEN ${copyId('g', 'd.attached_to::text')} END,
            d.attachments_skipped, 'c' || g || '-' || d.external_id, d.inactive
       FROM document_service.documents d CROSS JOIN generate_series($3::integer, $4::integer) g
      WHERE d.tenant_id = $1
     ON CONFLICT (id) DO NOTHING`;
}

/** A batch of copies into the tenant's detached partition, each vector nudged by ±0.01 a dimension. */
export function vectorCopies(table: string, partition: string): string {
  return `INSERT INTO "${partition}" (namespace, id, document_id, document_version, chunk_index,
            title, text, start_offset, end_offset, embedding, kb_ids, tags, uploaded_at, metadata,
            principals)
     SELECT $2, ${copyKey('g', 'v.document_id')} || '#' || v.document_version || '#' || v.chunk_index,
            ${copyKey('g', 'v.document_id')}, v.document_version, v.chunk_index, v.title, v.text,
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
