import { Client } from 'pg';

export interface DocumentState {
  id: string;
  status: string;
  version: number;
  chunkCount: number | null;
  failure?: { reason: string } | null;
}

export interface IndexRow {
  document_id: string;
  document_version: number;
  chunk_index: number;
}

export interface IndexCounts {
  /** Indexed documents whose rows in an index are not as many as their chunks. */
  mismatched: number;
  /** Rows of another version, or of a document that is not (or no longer) indexed. */
  orphans: number;
  /** Chunk indexes present twice in one index. */
  duplicated: number;
}

/** Checks each index's rows against the documents as document-service reports them. */
export function checkIndexes(
  indexes: IndexRow[][],
  statusOf: Map<string, DocumentState>,
): IndexCounts {
  const counts: IndexCounts = { mismatched: 0, orphans: 0, duplicated: 0 };
  for (const rows of indexes) {
    const perDocument = new Map<string, number>();
    const seen = new Set<string>();
    for (const row of rows) {
      const doc = statusOf.get(row.document_id);
      if (!doc || doc.status !== 'indexed' || row.document_version !== doc.version) {
        counts.orphans += 1;
        continue;
      }
      const key = `${row.document_id}#${row.chunk_index}`;
      if (seen.has(key)) counts.duplicated += 1;
      seen.add(key);
      perDocument.set(row.document_id, (perDocument.get(row.document_id) ?? 0) + 1);
    }
    for (const doc of statusOf.values()) {
      if (doc.status === 'indexed' && (perDocument.get(doc.id) ?? 0) !== doc.chunkCount)
        counts.mismatched += 1;
    }
  }
  return counts;
}

/**
 * The tenant's rows in the vector index and the lexical index, read straight from their tables.
 * Read-only, and on purpose: no API lists an index's rows per chunk and version, and that is
 * what the run checks (exactly once, nothing of another version, nothing orphaned). The table
 * names are indexing-service's (search_index.chunks) and the pgvector store's (kb_vectors_384).
 */
export async function readIndexRows(
  tenant: string,
  urls: { database: string; vectorDatabase: string },
): Promise<IndexRow[][]> {
  const vectors = new Client({ connectionString: urls.vectorDatabase });
  const lexical = new Client({ connectionString: urls.database });
  await vectors.connect();
  await lexical.connect();
  try {
    const vectorRows = await vectors.query<IndexRow>(
      'SELECT document_id, document_version, chunk_index FROM kb_vectors_384 WHERE namespace = $1',
      [tenant],
    );
    const lexicalRows = await lexical.query<IndexRow>(
      'SELECT document_id, document_version, chunk_index FROM search_index.chunks WHERE tenant_id = $1',
      [tenant],
    );
    return [vectorRows.rows, lexicalRows.rows];
  } finally {
    await vectors.end();
    await lexical.end();
  }
}
