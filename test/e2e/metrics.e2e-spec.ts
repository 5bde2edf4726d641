/**
 * Lag and backlog (issue 36, item 3; docs/adr/0041): every Kafka consumer reports
 * `kb_consumer_lag{group,topic}` and document-service reports `kb_documents_in_stage{stage}` on
 * `/metrics`, with values read from the broker and the database. The counters and histograms of
 * work in a knowledge base carry `knowledge_base`.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { SERVICES } from '../support/services';
import { MISSIONS_DOCUMENT, useSuite } from '../support/suite';
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

  it('labels uploads, searches, embedded and indexed chunks and handled events with the knowledge base', async () => {
    const knowledgeBase = 'metrics-handbook';
    const created = await fetch(`${suite.documentUrl}/v1/knowledge-bases`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ id: knowledgeBase, name: 'Metrics handbook' }),
    });
    expect(created.status).toBe(201);
    const response = await suite.upload(
      'missions.md',
      MISSIONS_DOCUMENT,
      'text/markdown',
      undefined,
      { knowledgeBaseIds: [knowledgeBase] },
    );
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    await waitFor(
      () => suite.getDocument(id),
      (d) => d.status === 'indexed',
      120_000,
    );
    const query = { query: 'How did the orbiter reach Venus?', topK: 3 };
    expect((await suite.search({ ...query, knowledgeBaseIds: [knowledgeBase] })).hits.length).toBe(
      3,
    );
    expect((await suite.search(query)).hits.length).toBe(3);

    const label = `knowledge_base="${knowledgeBase}"`;
    /** The samples of `name` on `service` whose labels include each of `labels`. */
    const labelled = async (service: string, name: string, ...labels: string[]) =>
      samples(await metricsOf(port(service)), name).filter(([sample]) =>
        labels.every((l) => sample.split(',').includes(l)),
      );
    expect(
      await labelled('document-service', 'kb_documents_uploaded_total', label, 'outcome="created"'),
    ).toEqual([[expect.any(String), 1]]);
    expect(await labelled('query-service', 'kb_search_requests_total', label)).toEqual([
      [expect.stringContaining('cache="miss"'), 1],
    ]);
    expect(await labelled('query-service', 'kb_search_duration_ms_count', label)).toHaveLength(1);
    // A search naming no knowledge base is the whole tenant's.
    expect(
      await labelled('query-service', 'kb_search_requests_total', 'knowledge_base="_all"'),
    ).toHaveLength(1);
    const [[, embedded]] = await labelled('embedding-service', 'kb_chunks_embedded_total', label);
    const [[, indexed]] = await labelled('indexing-service', 'kb_chunks_indexed_total', label);
    expect(embedded).toBeGreaterThan(0);
    expect(indexed).toBe(embedded);
    expect(
      await labelled(
        'embedding-service',
        'kb_events_handled_total',
        label,
        'topic="kb.document.parsed.v1"',
      ),
    ).toEqual([[expect.any(String), 1]]);
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
