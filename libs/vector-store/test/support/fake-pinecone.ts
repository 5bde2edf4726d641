import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import {
  type FakeIndexKind,
  invalidQuery,
  invalidRecord,
  sparseDot,
  type SparseValues,
  toFloat32,
} from './fake-pinecone-sparse';

interface StoredVector {
  values: number[];
  sparseValues?: SparseValues | undefined;
  metadata?: Record<string, unknown>;
}

/**
 * FAKE Pinecone data plane for tests: an in-memory HTTP server speaking the subset of the Pinecone
 * data-plane REST API that PineconeStore and PineconeLexicalIndex use (upsert, query with metadata
 * filters, fetch, update, list, delete, index stats). Real Pinecone cannot run here; the same
 * adapters are tested against it when PINECONE_API_KEY is set. Filters are evaluated on Pinecone's
 * own JSON form, as documented for Pinecone, independently of the adapter's translation, so a
 * wrong translation fails the suite.
 *
 * `kind` picks the index it plays (fake-pinecone-sparse.ts has the documented rules it enforces):
 * a dense index with the cosine metric (the default, as operators create the vector index), a
 * dense `dotproduct` index whose records may carry sparse values too (sparse-dense: a query's score
 * is the dense dot product plus the sparse one), or a sparse index (`vector_type: sparse`: sparse
 * values only, scored by their dot product, records scoring 0 left out).
 */
export class FakePineconeDataPlane {
  /** How many ids each delete call named (batching is checked against Pinecone's limit). */
  readonly deleteCalls: number[] = [];
  private readonly namespaces = new Map<string, Map<string, StoredVector>>();
  /** While set, fetch answers from this earlier copy: Pinecone's reads are eventually consistent. */
  private lagging?: Map<string, Map<string, StoredVector>>;
  private readonly server: Server = createServer((req, res) => void this.route(req, res));
  readonly requests: string[] = [];

  constructor(private readonly kind: FakeIndexKind = { vectorType: 'dense', metric: 'cosine' }) {}

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** From now on fetch answers from the data as it is now, until `catchUp()`. */
  lagReads(): void {
    this.lagging = structuredClone(this.namespaces);
  }

  catchUp(): void {
    this.lagging = undefined;
  }

  /**
   * How many records the fake holds, in every namespace, or in a tenant's (its own space's and
   * its pipelines', `<tenant>~…`) when named: other processes sharing the fake may write too.
   */
  size(tenant?: string): number {
    return [...this.namespaces]
      .filter(([name]) => tenant === undefined || name === tenant || name.startsWith(`${tenant}~`))
      .reduce((sum, [, vectors]) => sum + vectors.size, 0);
  }

  /** The record as the fake holds it (what a test checks was written), or undefined. */
  stored(namespace: string, id: string): StoredVector | undefined {
    return this.namespaces.get(namespace)?.get(id);
  }

  private ns(name: string | undefined): Map<string, StoredVector> {
    const key = name ?? '';
    let vectors = this.namespaces.get(key);
    if (!vectors) {
      vectors = new Map();
      this.namespaces.set(key, vectors);
    }
    return vectors;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    this.requests.push(`${req.method} ${url.pathname}`);
    if (!req.headers['api-key']) return send(res, 401, { message: 'missing Api-Key header' });
    const body = req.method === 'POST' ? await readJson(req) : {};
    switch (`${req.method} ${url.pathname}`) {
      case 'POST /vectors/upsert': {
        const vectors = this.ns(body['namespace'] as string);
        const records = body['vectors'] as Array<{ id: string } & StoredVector>;
        // Pinecone validates the whole request before writing any of it.
        for (const r of records) {
          const refused = invalidRecord(this.kind, r);
          if (refused) return send(res, 400, invalidArgument(refused));
        }
        for (const r of records) {
          vectors.set(r.id, {
            values: toFloat32(r.values ?? []),
            ...(r.sparseValues
              ? {
                  sparseValues: {
                    indices: r.sparseValues.indices,
                    values: toFloat32(r.sparseValues.values),
                  },
                }
              : {}),
            metadata: r.metadata,
          });
        }
        return send(res, 200, { upsertedCount: records.length });
      }
      case 'POST /query': {
        const refused = invalidQuery(this.kind, body);
        if (refused) return send(res, 400, invalidArgument(refused));
        const query = toFloat32((body['vector'] as number[] | undefined) ?? []);
        const sparse = body['sparseVector'] as SparseValues | undefined;
        const querySparse = sparse && { indices: sparse.indices, values: toFloat32(sparse.values) };
        const filter = body['filter'] as Record<string, unknown> | undefined;
        const score = (v: StoredVector): number => {
          if (this.kind.vectorType === 'sparse') return sparseDot(querySparse, v.sparseValues);
          if (this.kind.metric === 'cosine') return cosine(query, v.values);
          return dot(query, v.values) + sparseDot(querySparse, v.sparseValues);
        };
        const matches = [...this.ns(body['namespace'] as string).entries()]
          .filter(([, v]) => !filter || matchesPineconeFilter(filter, v.metadata ?? {}))
          .map(([id, v]) => ({
            id,
            // Scores come back as float32, as Pinecone computes them.
            score: Math.fround(score(v)),
            ...(body['includeMetadata'] ? { metadata: v.metadata } : {}),
          }))
          // A sparse index leaves out the records its query scores 0 (they share no index).
          .filter((m) => this.kind.vectorType === 'dense' || m.score !== 0)
          .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
          .slice(0, body['topK'] as number);
        return send(res, 200, { matches, namespace: body['namespace'] ?? '' });
      }
      case 'GET /vectors/fetch': {
        const name = url.searchParams.get('namespace') ?? '';
        const vectors = this.lagging ? (this.lagging.get(name) ?? new Map()) : this.ns(name);
        const records: Record<string, { id: string; values: number[]; metadata?: object }> = {};
        for (const id of url.searchParams.getAll('ids')) {
          const found = vectors.get(id);
          if (found) {
            records[id] = {
              id,
              values: found.values,
              ...(found.sparseValues ? { sparseValues: found.sparseValues } : {}),
              metadata: found.metadata,
            };
          }
        }
        return send(res, 200, {
          vectors: records,
          namespace: url.searchParams.get('namespace') ?? '',
        });
      }
      case 'GET /vectors/list': {
        const prefix = url.searchParams.get('prefix') ?? '';
        const limit = Number(url.searchParams.get('limit') ?? 100);
        const offset = Number(url.searchParams.get('paginationToken') ?? 0);
        const ids = [...this.ns(url.searchParams.get('namespace') ?? '').keys()]
          .filter((id) => id.startsWith(prefix))
          .sort();
        const page = ids.slice(offset, offset + limit);
        const next = offset + limit < ids.length ? { next: String(offset + limit) } : undefined;
        return send(res, 200, {
          vectors: page.map((id) => ({ id })),
          namespace: url.searchParams.get('namespace') ?? '',
          ...(next ? { pagination: next } : {}),
        });
      }
      case 'POST /describe_index_stats': {
        const all = [...this.namespaces.values()];
        const first = all.flatMap((vectors) => [...vectors.values()])[0];
        return send(res, 200, {
          namespaces: Object.fromEntries(
            [...this.namespaces].map(([name, vectors]) => [name, { vectorCount: vectors.size }]),
          ),
          dimension: first?.values.length ?? 0,
          indexFullness: 0,
          totalVectorCount: all.reduce((sum, vectors) => sum + vectors.size, 0),
        });
      }
      case 'POST /vectors/update': {
        const stored = this.ns(body['namespace'] as string).get(body['id'] as string);
        if (!stored) return send(res, 404, { message: `no vector ${String(body['id'])}` });
        // Pinecone merges setMetadata into the record's metadata.
        stored.metadata = { ...stored.metadata, ...(body['setMetadata'] as object) };
        return send(res, 200, {});
      }
      case 'POST /vectors/delete': {
        const vectors = this.ns(body['namespace'] as string);
        const ids = (body['ids'] as string[] | undefined) ?? [];
        // Pinecone refuses more than 1,000 ids in one delete.
        if (ids.length > 1000) {
          return send(res, 400, { message: `${ids.length} ids in one delete: at most 1000` });
        }
        this.deleteCalls.push(ids.length);
        if (body['deleteAll']) vectors.clear();
        for (const id of (body['ids'] as string[] | undefined) ?? []) vectors.delete(id);
        return send(res, 200, {});
      }
      default:
        return send(res, 404, {
          message: `the fake does not implement ${req.method} ${url.pathname}`,
        });
    }
  }
}

type Json = string | number | boolean | string[];

/**
 * Pinecone's metadata filter semantics: a list field matches `$eq`/`$in` when any element does,
 * `$ne`/`$nin` when none does (also when the field is missing); ranges compare numbers only.
 */
export function matchesPineconeFilter(
  filter: Record<string, unknown>,
  metadata: Record<string, unknown>,
): boolean {
  return Object.entries(filter).every(([key, condition]) => {
    if (key === '$and') {
      return (condition as Record<string, unknown>[]).every((f) =>
        matchesPineconeFilter(f, metadata),
      );
    }
    if (key === '$or') {
      return (condition as Record<string, unknown>[]).some((f) =>
        matchesPineconeFilter(f, metadata),
      );
    }
    const held = metadata[key] as Json | undefined;
    const values = held === undefined ? [] : Array.isArray(held) ? held : [held];
    const operators =
      typeof condition === 'object' && condition !== null && !Array.isArray(condition)
        ? (condition as Record<string, unknown>)
        : { $eq: condition };
    return Object.entries(operators).every(([op, operand]) => {
      const list = Array.isArray(operand) ? (operand as unknown[]) : [operand];
      const any = values.some((v) => list.some((o) => o === v));
      switch (op) {
        case '$eq':
        case '$in':
          return any;
        case '$ne':
        case '$nin':
          return !any;
        case '$exists':
          return (held !== undefined) === operand;
        case '$gt':
          return values.some((v) => typeof v === 'number' && v > (operand as number));
        case '$gte':
          return values.some((v) => typeof v === 'number' && v >= (operand as number));
        case '$lt':
          return values.some((v) => typeof v === 'number' && v < (operand as number));
        case '$lte':
          return values.some((v) => typeof v === 'number' && v <= (operand as number));
        default:
          throw new Error(`the fake does not know the filter operator ${op}`);
      }
    });
  });
}

function dot(a: number[], b: number[]): number {
  let sum = 0;
  a.forEach((x, i) => (sum += x * (b[i] ?? 0)));
  return sum;
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  a.forEach((x, i) => {
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  });
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length
    ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>)
    : {};
}

/**
 * Pinecone's error body for a vector operation it refuses (HTTP 400): an `rpcStatus`, code 3
 * (INVALID_ARGUMENT), as the data-plane API documents for the vector operations.
 */
function invalidArgument(message: string) {
  return { code: 3, message, details: [] };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
