/**
 * Search deadlines (docs/adr/0042): with the tenant's vector partition locked by another session,
 * a search answers within its budget (the lexical hits, marked degraded; or 504 when only the
 * vector side was asked for), the statements stuck behind the lock are cancelled in Postgres, and
 * once the lock is released the service is ready and searches in full again.
 */
import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { kbv1 } from '@kb/contracts';
import { Client } from 'pg';

import { kbClient } from '../support/grpc-client';
import { MISSIONS_DOCUMENT, useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(240_000);

/** What the deadline may be overrun by: the behaviour under test. */
const SLACK_MS = 50;

interface SearchBody {
  hits: Array<{ text: string; strategies: string[] }>;
  degraded: boolean;
  degradedReason?: string;
  error?: { code: string };
}

describe('search deadlines', () => {
  const suite = useSuite('deadline', 7700);
  const db = new Client({ connectionString: process.env['VECTOR_DATABASE_URL'] });
  let partition = '';

  beforeAll(async () => {
    const response = await suite.upload('missions.md', MISSIONS_DOCUMENT, 'text/markdown');
    const { id } = (await response.json()) as { id: string };
    await waitFor(
      () => suite.getDocument(id),
      (d) => d.status === 'indexed',
      120_000,
    );
    await db.connect();
    // The tenant's own partition of the vector table (docs/adr/0029): locking it blocks this
    // tenant's vector queries only, not other suites'.
    const { rows } = await db.query<{ part: string }>(
      'SELECT tableoid::regclass::text AS part FROM kb_vectors_384 WHERE namespace = $1 LIMIT 1',
      [suite.tenant],
    );
    partition = rows[0]!.part;
  });

  afterAll(async () => {
    await db.query('ROLLBACK').catch(() => undefined);
    await db.end();
  });

  /** A search over REST and how long it took, in ms, as the caller sees it. */
  async function timedSearch(body: Record<string, unknown>) {
    const started = performance.now();
    const response = await fetch(`${suite.queryUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as SearchBody;
    const took = performance.now() - started;
    return {
      status: response.status,
      body: json,
      took,
      timing: response.headers.get('server-timing'),
    };
  }

  /** Backends waiting for a lock on the partition: a statement the deadline did not cancel. */
  async function waitingOnPartition(): Promise<number> {
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_locks WHERE relation = $1::regclass AND NOT granted`,
      [partition],
    );
    return Number(rows[0]!.n);
  }

  it('answers within the deadline while the vector table is locked, cancels the stuck statements, and recovers once it is released', async () => {
    // Warm: the lexical snapshot is built and the model loaded, so the budget is spent on the lock.
    const warm = await timedSearch({ query: 'orbital transfer between planets', timeoutMs: 5000 });
    expect(warm.status).toBe(200);

    await db.query('BEGIN');
    await db.query(`LOCK TABLE ${partition} IN ACCESS EXCLUSIVE MODE`);
    try {
      // Hybrid: BM25 answers, the vector side runs out of time.
      const hybrid = await timedSearch({ query: 'Hohmann transfer', topK: 5, timeoutMs: 400 });
      expect(hybrid.took).toBeLessThan(400 + SLACK_MS);
      expect(hybrid.status).toBe(200);
      expect(hybrid.body).toMatchObject({
        degraded: true,
        degradedReason: 'vector_search_timed_out',
      });
      expect(hybrid.body.hits[0]!.text).toContain('Hohmann transfer');
      expect(hybrid.body.hits[0]!.strategies).toEqual(['lexical']);

      // Semantic only: nothing finishes in time, 504 with a stable code.
      const semantic = await timedSearch({
        query: 'aerobraking at Venus',
        mode: 'semantic',
        timeoutMs: 300,
      });
      expect(semantic.took).toBeLessThan(300 + SLACK_MS);
      expect(semantic.status).toBe(504);
      expect(semantic.body.error?.code).toBe('deadline_exceeded');

      // gRPC: the call's deadline is the budget; the degraded answer comes before it.
      const client = kbClient(`127.0.0.1:${suite.ports['query-service']!.grpcPort}`);
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${suite.token}`);
      const started = performance.now();
      const grpc = await new Promise<kbv1.SearchResponse>((resolve, reject) =>
        client.search(
          kbv1.SearchRequest.fromPartial({ query: 'gravity assist trajectory', topK: 5 }),
          metadata,
          { deadline: Date.now() + 500 },
          (error, response) => (error ? reject(error) : resolve(response)),
        ),
      );
      const grpcTook = performance.now() - started;
      expect(grpcTook).toBeLessThan(500 + SLACK_MS);
      expect(grpc).toMatchObject({ degraded: true, degradedReason: 'vector_search_timed_out' });
      const semanticGrpc = await new Promise<ServiceError>((resolve) =>
        client.search(
          kbv1.SearchRequest.fromPartial({
            query: 'delta-v budget',
            mode: kbv1.SearchMode.SEARCH_MODE_SEMANTIC,
          }),
          metadata,
          { deadline: Date.now() + 300 },
          (error) => resolve(error!),
        ),
      );
      expect(semanticGrpc.code).toBe(status.DEADLINE_EXCEEDED);
      client.close();
      process.stdout.write(
        `${JSON.stringify({
          deadline_took_ms: {
            hybrid_400: Math.round(hybrid.took),
            semantic_300: Math.round(semantic.took),
            grpc_hybrid_500: Math.round(grpcTook),
          },
          hybrid_server_timing: hybrid.timing,
        })}\n`,
      );

      // The lock is still held, yet no statement of query-service waits on it any more.
      await waitFor(waitingOnPartition, (n) => n === 0, 2_000);
    } finally {
      await db.query('COMMIT');
    }

    const ready = await fetch(`${suite.queryUrl}/health/ready`);
    expect(ready.status).toBe(200);
    const after = await timedSearch({ query: 'Hohmann transfer orbit', topK: 5 });
    expect(after.status).toBe(200);
    expect(after.body.degraded).toBe(false);
    expect(after.body.hits.some((h) => h.strategies.includes('semantic'))).toBe(true);
  });
});
