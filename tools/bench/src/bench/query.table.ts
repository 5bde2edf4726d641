/** The figures of `bench query`'s JSON a reader compares across scales, as a short table. */
interface Latency {
  p50_ms: number;
  p95_ms: number;
  qps: number;
  deadline_exceeded?: number;
  cpu_ms_per_search?: Record<string, number>;
}
interface QueryResult {
  tenant: string;
  corpus: { chunks: number };
  build?: { seconds?: Record<string, number> };
  disk_mb?: {
    vector_partition?: { table: number; indexes: number };
    lexical: { chunks: number; postings: number };
    databases: { lexical: number; vectors: number };
    redis_used_memory?: number;
  };
  memory_mb: Record<string, number>;
  lexical?: { passes: { memory: number; index: number }; snapshot_build_ms: number };
  query: {
    warm_start?: { state: string; spaces: number; lists: number; ms?: number };
    warm_up?: { c4: { p50_ms: number; p95_ms: number; failed: number } };
    after_write?: { c4: { p50_ms: number; p95_ms: number; failed: number } };
    miss?: Record<string, { deadline_exceeded?: number }>;
    stages: { miss_c1: Record<string, { p50_ms: number; p95_ms: number }> };
    rerank_miss?: { outcomes?: Record<string, number> };
  };
  independent_client?: {
    miss: Record<string, Latency>;
    hit: Record<string, Latency>;
    rerank_miss?: Record<string, Latency>;
  };
  embed_floor?: { cisi: Latency };
  transport_floor?: { c1: Latency; ghz_hit_p95_minus_floor_p95_ms: number };
  machine?: { load_average_1m: { start: number; end: number; max: number } };
}

const STAGES = [
  'embed',
  'lexical',
  'feedback',
  'feedback_terms',
  'feedback_lexical',
  'vector',
  'documents',
];

export function queryTable(value: object): string {
  const r = value as QueryResult;
  const rows: Array<[string, string]> = [];
  const row = (name: string, text: string | undefined): void => {
    if (text !== undefined) rows.push([name, text]);
  };
  const pair = (l?: { p50_ms: number; p95_ms: number }): string | undefined =>
    l ? `${l.p50_ms} / ${l.p95_ms} ms` : undefined;
  row('tenant, chunks', `${r.tenant}, ${r.corpus.chunks}`);
  const s = r.build?.seconds;
  row(
    'build s (vector rows, HNSW+keys, lexical)',
    s ? `${s['vector_rows']}, ${s['vector_indexes']}, ${s['lexical']}` : 'not recorded',
  );
  const d = r.disk_mb;
  if (d) {
    const v = d.vector_partition;
    row('disk MB: vector partition (table + indexes)', v ? `${v.table} + ${v.indexes}` : 'none');
    row('disk MB: lexical share (chunks, postings)', `${d.lexical.chunks}, ${d.lexical.postings}`);
    row('disk MB: databases (lexical, vectors)', `${d.databases.lexical}, ${d.databases.vectors}`);
    row('redis used_memory MB', d.redis_used_memory?.toString());
  }
  row(
    'RSS MB under load',
    Object.entries(r.memory_mb)
      .map(([k, v]) => `${k.replace('-service', '')} ${v}`)
      .join(', '),
  );
  if (r.lexical) {
    const p = r.lexical.passes;
    row('BM25 searches (memory, Postgres)', `${p.memory}, ${p.index}`);
    row('snapshot build ms', String(r.lexical.snapshot_build_ms));
  }
  const start = r.query.warm_start;
  row(
    'warm start (spaces, lists, ms)',
    start && `${start.state} (${start.spaces}, ${start.lists}, ${start.ms ?? '–'})`,
  );
  const warm = r.query.warm_up?.c4;
  row('warm-up c4 p50 / p95 (failed)', warm && `${pair(warm)} (${warm.failed})`);
  const written = r.query.after_write?.c4;
  row('after a write c4 p50 / p95 (failed)', written && `${pair(written)} (${written.failed})`);
  for (const stage of STAGES) row(`stage ${stage} p50 / p95`, pair(r.query.stages.miss_c1[stage]));
  const ghz = r.independent_client;
  const floor = r.embed_floor?.cisi;
  row('ghz miss c1 p50 / p95', pair(ghz?.miss['c1']));
  row('model floor p95', floor ? `${floor.p95_ms} ms` : undefined);
  const c32 = ghz?.miss['c32'];
  row(
    'ghz miss c32 /s (× floor rate)',
    c32
      ? `${c32.qps}${floor ? ` (${Math.round((c32.qps / floor.qps) * 100) / 100}×)` : ''}`
      : undefined,
  );
  row(
    'ghz hit c1 p95, c32 /s',
    ghz ? `${ghz.hit['c1']!.p95_ms} ms, ${ghz.hit['c32']!.qps}` : undefined,
  );
  const transport = r.transport_floor;
  row(
    'transport floor c1 p50 / p95 (ghz hit p95 over it)',
    transport && `${pair(transport.c1)} (${transport.ghz_hit_p95_minus_floor_p95_ms} ms)`,
  );
  row('CPU ms per ghz miss at c32', cpuText(c32?.cpu_ms_per_search));
  const outcomes = r.query.rerank_miss?.outcomes;
  const reranks = outcomes && Object.values(outcomes).reduce((sum, n) => sum + n, 0);
  row(
    'ghz rerank miss c1 p50 / p95 (reranks applied)',
    ghz?.rerank_miss?.['c1'] &&
      `${pair(ghz.rerank_miss['c1'])}${outcomes ? ` (${outcomes['applied'] ?? 0} of ${reranks})` : ''}`,
  );
  const late = (client: string, passes: Record<string, { deadline_exceeded?: number }> = {}) =>
    Object.entries(passes)
      .filter(([, l]) => l.deadline_exceeded)
      .map(([c, l]) => `${client} ${c} ${l.deadline_exceeded}`);
  const lateOnes = [...late('bench', r.query.miss), ...late('ghz', ghz?.miss)];
  row('misses past the deadline', lateOnes.length > 0 ? lateOnes.join(', ') : undefined);
  const load = r.machine?.load_average_1m;
  row('load average 1m (start, max, end)', load && `${load.start}, ${load.max}, ${load.end}`);
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows.map(([name, text]) => `${name.padEnd(width)}  ${text}`).join('\n');
}

/** CPU ms per search by process, the largest first, those under 0.1 ms left out. */
function cpuText(cpu: Record<string, number> | undefined): string | undefined {
  if (!cpu) return undefined;
  const shown = Object.entries(cpu)
    .filter(([, ms]) => ms >= 0.1)
    .sort((a, b) => b[1] - a[1]);
  const total = Object.values(cpu).reduce((sum, ms) => sum + ms, 0);
  return `${Math.round(total * 10) / 10} (${shown.map(([name, ms]) => `${name.replace(/-service$/, '')} ${ms}`).join(', ')})`;
}
