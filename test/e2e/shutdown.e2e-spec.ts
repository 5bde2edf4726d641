/**
 * Graceful shutdown under load: SIGTERM embedding-service and indexing-service while a batch of
 * documents is in flight, restart them, and check that every document still ends `indexed` with
 * exactly its chunks in both indexes — nothing lost, nothing doubled.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { toIndexSpace } from '@kb/contracts';
import { PgLexicalIndex } from '@kb/lexical-index';
import { PgVectorStore } from '@kb/vector-store';

import {
  type RunningService,
  startService,
  startServices,
  stopServices,
  waitReady,
} from '../support/services';
import { testToken } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(300_000);

const TENANT = `shutdown-${randomUUID().slice(0, 8)}`;
const DOCUMENTS = 60;
const PORTS = {
  'document-service': { port: 4201 },
  'parser-service': { port: 4202 },
  'embedding-service': { port: 4203 },
  'indexing-service': { port: 4204 },
  'query-service': { port: 4205, grpcPort: 20251 },
  'acl-service': { port: 4206, grpcPort: 20261 },
  'webhook-service': { port: 4207 },
};
const documentUrl = `http://127.0.0.1:${PORTS['document-service'].port}`;

interface Listed {
  id: string;
  status: string;
  chunkCount: number | null;
  stageTimes: Record<string, string>;
}

describe('graceful shutdown while ingesting', () => {
  const env = { ...process.env, CHUNK_SIZE: '200', CHUNK_OVERLAP: '40' };
  const logDir = join(process.env['KB_HOME'] ?? '/tmp', 'logs', 'e2e-shutdown');
  let services: RunningService[] = [];
  const vectors = new PgVectorStore({ url: process.env['VECTOR_DATABASE_URL']! });
  const lexical = new PgLexicalIndex({ url: process.env['DATABASE_URL']! });

  beforeAll(async () => {
    mkdirSync(logDir, { recursive: true });
    services = startServices({ env, ports: PORTS, logDir });
    await waitReady(services);
    await vectors.ensureReady(384);
  });

  afterAll(async () => {
    await stopServices(services);
    await vectors.close();
    await lexical.close();
  });

  const list = async (): Promise<Listed[]> => {
    const all: Listed[] = [];
    let cursor: string | null = null;
    do {
      const url = `${documentUrl}/v1/documents?limit=100${cursor ? `&cursor=${cursor}` : ''}`;
      const page = (await (
        await fetch(url, {
          headers: {
            authorization: `Bearer ${await testToken({ tenant: TENANT, user: 'loader', roles: ['editor'] })}`,
          },
        })
      ).json()) as {
        items: Listed[];
        nextCursor: string | null;
      };
      all.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    return all;
  };

  it('ends every document indexed exactly once after SIGTERM and restart', async () => {
    const statuses = await Promise.all(
      Array.from({ length: DOCUMENTS }, async (_, i) => {
        const text = Array.from(
          { length: 6 },
          (_, s) => `Document ${i} sentence ${s} about topic ${(i * 7 + s) % 13}.`,
        ).join(' ');
        const form = new FormData();
        form.append('file', new Blob([`${text}\n\n${text.toUpperCase()}`]), `doc-${i}.txt`);
        const response = await fetch(`${documentUrl}/v1/documents`, {
          method: 'POST',
          body: form,
          headers: {
            authorization: `Bearer ${await testToken({ tenant: TENANT, user: 'loader', roles: ['editor'] })}`,
          },
        });
        return response.status;
      }),
    );
    expect(new Set(statuses)).toEqual(new Set([202]));
    // Mid-batch: some documents done, most still in the pipeline.
    await waitFor(list, (docs) => docs.some((d) => d.status === 'indexed'), 60_000, 50);

    const victims = services.filter(
      (s) => s.name === 'embedding-service' || s.name === 'indexing-service',
    );
    const started = Date.now();
    await stopServices(victims, 25_000);
    const stopMs = Date.now() - started;
    for (const victim of victims) {
      // Nest re-raises SIGTERM after closing, or exits 0; a SIGKILL would mean it hung.
      expect(victim.child.signalCode === 'SIGTERM' || victim.child.exitCode === 0).toBe(true);
    }
    expect(stopMs).toBeLessThan(25_000);
    const midway = (await list()).filter((d) => d.status === 'indexed').length;
    process.stdout.write(
      `stopped embedding and indexing in ${stopMs} ms with ${midway}/${DOCUMENTS} indexed\n`,
    );

    const restarted = victims.map((v) => startService(v.name, { env, ports: PORTS, logDir }));
    services = services.map((s) => restarted.find((r) => r.name === s.name) ?? s);
    await waitReady(restarted);

    const final = await waitFor(
      list,
      (docs) => docs.length === DOCUMENTS && docs.every((d) => d.status === 'indexed'),
      180_000,
      500,
    );
    for (const doc of final) {
      expect(doc.chunkCount).toBeGreaterThan(0);
      expect(await vectors.countDocument(toIndexSpace(TENANT), doc.id)).toBe(doc.chunkCount);
      expect(await lexical.countDocument(toIndexSpace(TENANT), doc.id)).toBe(doc.chunkCount);
      expect(Object.keys(doc.stageTimes)).toContain('indexed');
    }
  });

  it('has a restarted query-service take up the lexical index the last one held before it is ready', async () => {
    const queryUrl = `http://127.0.0.1:${PORTS['query-service'].port}`;
    const token = await testToken({ tenant: TENANT, user: 'loader', roles: ['editor'] });
    // Each search its own text: no cached result answers instead of the index.
    let n = 0;
    const search = async () => {
      const response = await fetch(`${queryUrl}/v1/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: `topic sentence document ${n++}`, mode: 'lexical' }),
      });
      expect(response.status).toBe(200);
    };
    /** BM25 searches so far by where they ran: a snapshot in memory, or Postgres. */
    const paths = async () => {
      const text = await (await fetch(`${queryUrl}/metrics`)).text();
      const count = (path: string) =>
        Number(
          text.match(
            new RegExp(`kb_lexical_searches_total{[^}]*path="${path}"[^}]*} (\\d+)`),
          )?.[1] ?? 0,
        );
      return { memory: count('memory'), index: count('index') };
    };
    // The first search goes to Postgres while the snapshot is built; then the lists are read.
    await waitFor(
      async () => {
        await search();
        return paths();
      },
      (p) => p.memory > 0,
      30_000,
      200,
    );
    const victim = services.find((s) => s.name === 'query-service')!;
    await stopServices([victim], 15_000);
    const restarted = startService('query-service', { env, ports: PORTS, logDir });
    services = services.map((s) => (s.name === 'query-service' ? restarted : s));
    await waitReady([restarted]);

    const ready = (await (await fetch(`${queryUrl}/health/ready`)).json()) as {
      details: { lexical_warm: { state: string; spaces: number; lists: number } };
    };
    // This suite's space at least (its port's set may name an earlier run's spaces too).
    const warm = ready.details.lexical_warm;
    expect(warm.state).toBe('warm');
    expect(warm.spaces).toBeGreaterThanOrEqual(1);
    expect(warm.lists).toBeGreaterThanOrEqual(3);
    // Its first search is answered in memory: no build to wait for, none sent to Postgres.
    await search();
    expect(await paths()).toEqual({ memory: 1, index: 0 });
  });
});
