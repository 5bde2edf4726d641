import { stubApi } from '../testing/run-command';
import { formatPipelineMetrics, gaugeSamples, pipelineMetricsOf } from './pipeline-metrics';

const EXPOSITION = [
  '# HELP kb_consumer_lag Messages a consumer group has still to read on a topic',
  '# TYPE kb_consumer_lag gauge',
  'kb_consumer_lag{group="indexing-service",topic="kb.document.embedded.v1"} 12',
  'kb_consumer_lag{group="indexing-service",topic="kb.document.deleted.v1"} 0',
  'kb_documents_in_stage{stage="pending"} 3',
  'kb_documents_in_stage{stage="embedding"} 40',
  'kb_other_total{service="x"} 9',
].join('\n');

describe('kb status: lag and backlog', () => {
  it('reads the gauges’ samples with their labels', () => {
    expect(gaugeSamples(EXPOSITION, 'kb_consumer_lag')).toEqual([
      { labels: { group: 'indexing-service', topic: 'kb.document.embedded.v1' }, value: 12 },
      { labels: { group: 'indexing-service', topic: 'kb.document.deleted.v1' }, value: 0 },
    ]);
    expect(gaugeSamples(EXPOSITION, 'kb_documents_in_stage').map((s) => s.value)).toEqual([3, 40]);
  });

  it('collects lag by service and the backlog from /metrics, and prints both', async () => {
    const api = await stubApi(() => ({ status: 200, text: EXPOSITION }));
    try {
      const metrics = await pipelineMetricsOf([{ service: 'indexing-service', url: api.url }]);
      expect(api.seen[0]!.url).toBe('/metrics');
      expect(metrics.backlog).toEqual({ pending: 3, embedding: 40 });
      expect(metrics.lag.map((l) => [l.service, l.topic, l.lag])).toEqual([
        ['indexing-service', 'kb.document.deleted.v1', 0],
        ['indexing-service', 'kb.document.embedded.v1', 12],
      ]);
      const printed = formatPipelineMetrics(metrics);
      expect(printed).toContain('backlog: pending 3, embedding 40');
      expect(printed).toMatch(/indexing-service +indexing-service +kb\.document\.embedded\.v1 +12/);
    } finally {
      await api.close();
    }
  });

  it('says when nothing reported', () => {
    expect(formatPipelineMetrics({ lag: [], backlog: {} })).toContain('backlog: not reported');
  });
});
