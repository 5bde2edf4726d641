/**
 * Every metric the chart's Grafana dashboards and alert rules query exists (docs/adr/0039): the
 * seven services run, a document is uploaded, indexed and searched twice (a cache miss, then a
 * hit), and each referenced metric family must be in some service's GET /metrics. A renamed
 * metric, or a dashboard naming one that was never written, fails here.
 *
 * OpenTelemetry exports an instrument only once it has recorded something, and a few record only
 * on a rare event this suite does not cause (RECORDED_ON_EVENT). For those the test checks the
 * instrument is created under that exact name in the source, and says so.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { EXTERNAL_METRICS, referencedMetrics } from '../deploy/monitoring-metrics';
import { MISSIONS_DOCUMENT, useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(240_000);

const ROOT = join(__dirname, '..', '..');
/** Recorded only when the event happens; the source file that creates each instrument. */
const RECORDED_ON_EVENT: Record<string, { event: string; file: string }> = {
  kb_events_dead_lettered_total: {
    event: 'a Kafka message sent to a dead-letter topic',
    file: 'libs/kafka/src/message-handling.ts',
  },
  kb_events_retried_total: {
    event: 'a Kafka handler retry',
    file: 'libs/kafka/src/message-handling.ts',
  },
  kb_webhooks_disabled_total: {
    event: 'a webhook subscription auto-disabled',
    file: 'apps/webhook-service/src/deliveries/delivery.dispatcher.ts',
  },
};

/** The metric families one /metrics text exposes (its `# TYPE` lines). */
const families = (text: string): string[] =>
  [...text.matchAll(/^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) /gm)].map(([, name]) => name!);

describe('metric names of the dashboards and alert rules', () => {
  const suite = useSuite('metrics-names', 7900);
  const exposed = new Map<string, string[]>();

  beforeAll(async () => {
    const response = await suite.upload('missions.md', MISSIONS_DOCUMENT, 'text/markdown');
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    await waitFor(
      () => suite.getDocument(id),
      (d) => d.status === 'indexed',
      120_000,
    );
    const query = { query: 'How did the orbiter reach Venus?', topK: 3 };
    expect((await suite.search(query)).cache).toBe('miss');
    expect((await suite.search(query)).cache).toBe('hit');
    // An error response, for the HTTP status code series.
    expect((await fetch(`${suite.documentUrl}/v1/documents/not-a-document`)).status).toBe(401);
    for (const [service, { port }] of Object.entries(suite.ports)) {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      for (const name of families(text)) exposed.set(name, [...(exposed.get(name) ?? []), service]);
    }
  });

  const referenced = [...referencedMetrics().entries()].filter(
    ([name]) => !EXTERNAL_METRICS.includes(name),
  );

  it('finds metric names to check', () => {
    expect(referenced.length).toBeGreaterThan(8);
  });

  it.each(referenced.filter(([name]) => !RECORDED_ON_EVENT[name]))(
    '%s is served by a service',
    (name, where) => {
      if (!exposed.has(name)) {
        throw new Error(`${name} (queried by ${where.join('; ')}) is on no service's /metrics`);
      }
    },
  );

  it.each(referenced.filter(([name]) => RECORDED_ON_EVENT[name]))(
    '%s, recorded only on its event, is created under that name',
    (name) => {
      const { file } = RECORDED_ON_EVENT[name]!;
      expect(readFileSync(join(ROOT, file), 'utf8')).toContain(`createCounter('${name}'`);
    },
  );
});
