/**
 * Lag and backlog (issue 36, item 3; docs/adr/0041): every Kafka consumer reports
 * `kb_consumer_lag{group,topic}` and document-service reports `kb_documents_in_stage{stage}` on
 * `/metrics`, with values read from the broker and the database.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { SERVICES } from '../support/services';
import { useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(300_000);

const BASE = 8100;
const metricsOf = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
/** `name{labels} value` samples of one metric, as [labels, value]. */
const samples = (text: string, name: string) =>
  [...text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)`, 'gm'))].map(
    ([, labels, value]) => [labels!, Number(value)] as const,
  );

describe('lag and backlog metrics', () => {
  const suite = useSuite('metrics', BASE);
  const port = (name: string) => BASE + SERVICES.findIndex((s) => s.name === name) + 1;

  it('counts the documents in each pipeline stage on document-service', async () => {
    const text = await waitFor(
      () => metricsOf(port('document-service')),
      (t) => samples(t, 'kb_documents_in_stage').length === 4,
      30_000,
    );
    const stages = samples(text, 'kb_documents_in_stage');
    expect(stages.map(([labels]) => /stage="(\w+)"/.exec(labels)?.[1]).sort()).toEqual([
      'embedding',
      'indexing',
      'parsing',
      'pending',
    ]);
    for (const [, value] of stages) expect(Number.isInteger(value) && value >= 0).toBe(true);
  });

  it('reports each consumer group’s lag per topic on every service that consumes', async () => {
    const response = await suite.upload('lag.txt', 'lag probe text', 'text/plain');
    expect(response.status).toBe(202);
    for (const name of ['parser-service', 'embedding-service', 'indexing-service']) {
      const text = await waitFor(
        () => metricsOf(port(name)),
        (t) => samples(t, 'kb_consumer_lag').length > 0,
        30_000,
      );
      const lags = samples(text, 'kb_consumer_lag');
      for (const [labels, value] of lags) {
        expect(labels).toMatch(/(^|,)group="[^"]+"/);
        expect(labels).toMatch(/(^|,)topic="kb\.[^"]+"/);
        expect(Number.isInteger(value) && value >= 0).toBe(true);
      }
    }
  });

  it('shows them in kb status, with every service ready', async () => {
    const cli = join(__dirname, '../../apps/kb-cli/dist/main.js');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [cli, 'status', '--port-base', String(BASE), '--json'],
      { env: process.env },
    );
    const status = JSON.parse(stdout) as {
      services: Array<{ service: string; status: string }>;
      lag: Array<{ service: string; group: string; topic: string; lag: number }>;
      backlog: Record<string, number>;
    };
    expect(status.services.map((s) => s.status)).toEqual(SERVICES.map(() => 'ready'));
    expect(Object.keys(status.backlog).sort()).toEqual([
      'embedding',
      'indexing',
      'parsing',
      'pending',
    ]);
    expect([...new Set(status.lag.map((l) => l.service))]).toEqual(
      expect.arrayContaining(['parser-service', 'embedding-service', 'indexing-service']),
    );
  });
});
