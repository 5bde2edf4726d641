import { formatTable } from '../collections/table';

/** One sample of a gauge as the services' `/metrics` (Prometheus text exposition) shows it. */
export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/**
 * The samples of the gauge `name` in a Prometheus text exposition. The services' own gauges
 * only: plain `name{a="x",b="y"} value` lines, label values without escaped quotes.
 */
export function gaugeSamples(exposition: string, name: string): Sample[] {
  const line = new RegExp(`^${name}\\{([^}]*)\\} (\\S+)`, 'gm');
  return [...exposition.matchAll(line)].map(([, labels, value]) => ({
    labels: Object.fromEntries(
      [...labels!.matchAll(/(\w+)="([^"]*)"/g)].map(([, key, text]) => [key!, text!]),
    ),
    value: Number(value),
  }));
}

export interface ConsumerLag {
  service: string;
  group: string;
  topic: string;
  lag: number;
}

export interface PipelineMetrics {
  /** `kb_consumer_lag` of every service that consumes, by group and topic. */
  lag: ConsumerLag[];
  /** `kb_documents_in_stage` of document-service: documents waiting in each stage. */
  backlog: Record<string, number>;
}

/** Reads every service's `/metrics`; a service that does not answer adds nothing. */
export async function pipelineMetricsOf(
  services: Array<{ service: string; url: string }>,
  timeoutMs = 3000,
): Promise<PipelineMetrics> {
  const result: PipelineMetrics = { lag: [], backlog: {} };
  await Promise.all(
    services.map(async ({ service, url }) => {
      const text = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(timeoutMs) })
        .then((r) => (r.ok ? r.text() : ''))
        .catch(() => '');
      for (const { labels, value } of gaugeSamples(text, 'kb_consumer_lag')) {
        result.lag.push({
          service,
          group: labels['group'] ?? '',
          topic: labels['topic'] ?? '',
          lag: value,
        });
      }
      for (const { labels, value } of gaugeSamples(text, 'kb_documents_in_stage')) {
        result.backlog[labels['stage'] ?? ''] = value;
      }
    }),
  );
  result.lag.sort((a, b) => a.service.localeCompare(b.service) || a.topic.localeCompare(b.topic));
  return result;
}

export function formatPipelineMetrics({ lag, backlog }: PipelineMetrics): string {
  const stages = Object.entries(backlog);
  const lines = [
    stages.length
      ? `backlog: ${stages.map(([stage, count]) => `${stage} ${count}`).join(', ')}\n`
      : 'backlog: not reported (document-service unreachable or metrics off)\n',
  ];
  lines.push(
    lag.length
      ? formatTable(
          ['service', 'consumer group', 'topic', 'lag'],
          lag.map((l) => [l.service, l.group, l.topic, String(l.lag)]),
        )
      : 'consumer lag: not reported\n',
  );
  return lines.join('\n');
}
