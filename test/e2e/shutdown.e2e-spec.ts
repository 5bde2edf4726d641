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
});
