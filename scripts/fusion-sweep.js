// Offline fusion sweep over two TREC run files of one judged collection (what
// `kb eval --mode semantic,lexical --run-out <file>` writes): scores every candidate fusion rule at
// document level with the same metrics as `kb eval`, so a rule can be chosen without re-ingesting.
// Usage: node scripts/fusion-sweep.js --qrels <qrels/test.tsv> --semantic <run> --lexical <run>
// Prints one JSON line per rule. (The service fuses chunks; the eval keeps each document's best
// chunk. For corpora of one chunk per document the two agree; otherwise this is an estimate.)
'use strict';
const fs = require('node:fs');

const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  if (i === -1 || !process.argv[i + 1]) throw new Error(`--${name} is required`);
  return process.argv[i + 1];
};

function readQrels(file) {
  const qrels = new Map();
  for (const [i, line] of fs.readFileSync(file, 'utf8').split('\n').entries()) {
    const [q, d, s] = line.trim().split('\t');
    if (!q || !d || s === undefined || (i === 0 && Number.isNaN(Number(s)))) continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q).set(d, Number(s));
  }
  return qrels;
}

/** qid → [{doc, score}] best first. */
function readRun(file) {
  const run = new Map();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const [q, , d, rank, score] = line.trim().split(/\s+/);
    if (!q || !d) continue;
    if (!run.has(q)) run.set(q, []);
    run.get(q).push({ doc: d, rank: Number(rank), score: Number(score) });
  }
  for (const list of run.values()) list.sort((a, b) => a.rank - b.rank);
  return run;
}

const ndcg = (ranking, judged, k = 10) => {
  const dcg = ranking
    .slice(0, k)
    .reduce((s, d, i) => s + (judged.get(d) ?? 0) / Math.log2(i + 2), 0);
  const ideal = [...judged.values()]
    .filter((r) => r > 0)
    .sort((a, b) => b - a)
    .slice(0, k)
    .reduce((s, r, i) => s + r / Math.log2(i + 2), 0);
  return ideal ? dcg / ideal : 0;
};
const recall = (ranking, judged, k = 100) => {
  const rel = [...judged].filter(([, r]) => r > 0).map(([d]) => d);
  const top = new Set(ranking.slice(0, k));
  return rel.length ? rel.filter((d) => top.has(d)).length / rel.length : 0;
};
const mrr = (ranking, judged, k = 10) => {
  const i = ranking.slice(0, k).findIndex((d) => (judged.get(d) ?? 0) > 0);
  return i === -1 ? 0 : 1 / (i + 1);
};

const normalizers = {
  minmax: (list) => {
    const s = list.map((x) => x.score);
    const max = Math.max(...s);
    const min = Math.min(...s);
    return new Map(list.map((x) => [x.doc, max === min ? 1 : (x.score - min) / (max - min)]));
  },
  zscore: (list) => {
    const s = list.map((x) => x.score);
    const mean = s.reduce((a, b) => a + b, 0) / s.length;
    const sd = Math.sqrt(s.reduce((a, b) => a + (b - mean) ** 2, 0) / s.length) || 1;
    return new Map(list.map((x) => [x.doc, (x.score - mean) / sd]));
  },
  rank: (list, k = 60) => new Map(list.map((x, i) => [x.doc, 1 / (k + i + 1)])),
};

/** Fuses two lists with per-list weights; a document missing from a list gets `missing` there. */
function fuse(sem, lex, { norm, alpha, missing = 'zero', k }) {
  const n = (list) => (norm === 'rank' ? normalizers.rank(list, k) : normalizers[norm](list));
  const a = n(sem);
  const b = n(lex);
  const floor = (m) => (missing === 'min' && m.size ? Math.min(...m.values()) : 0);
  const fa = floor(a);
  const fb = floor(b);
  const docs = new Set([...a.keys(), ...b.keys()]);
  return [...docs]
    .map((d) => ({ d, s: alpha * (a.get(d) ?? fa) + (1 - alpha) * (b.get(d) ?? fb) }))
    .sort((x, y) => y.s - x.s)
    .map((x) => x.d);
}

const qrels = readQrels(arg('qrels'));
const semantic = readRun(arg('semantic'));
const lexical = readRun(arg('lexical'));

const rules = [
  { name: 'semantic', rank: (q) => (semantic.get(q) ?? []).map((x) => x.doc) },
  { name: 'lexical', rank: (q) => (lexical.get(q) ?? []).map((x) => x.doc) },
];
for (const alpha of [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]) {
  for (const norm of ['minmax', 'zscore']) {
    for (const missing of ['zero', 'min']) {
      rules.push({
        name: `convex-${norm}-missing_${missing}-a${alpha}`,
        rank: (q) => fuse(semantic.get(q) ?? [], lexical.get(q) ?? [], { norm, alpha, missing }),
      });
    }
  }
}
for (const k of [10, 60]) {
  for (const alpha of [0.5, 0.6, 0.7]) {
    rules.push({
      name: `rrf-k${k}-w${alpha}`,
      rank: (q) => fuse(semantic.get(q) ?? [], lexical.get(q) ?? [], { norm: 'rank', alpha, k }),
    });
  }
}

for (const rule of rules) {
  const ids = [...qrels.keys()];
  const mean = (metric) =>
    Math.round(
      (ids.reduce((s, q) => s + metric(rule.rank(q), qrels.get(q)), 0) / ids.length) * 1e4,
    ) / 1e4;
  process.stdout.write(
    `${JSON.stringify({ rule: rule.name, 'ndcg@10': mean(ndcg), 'recall@100': mean(recall), 'mrr@10': mean(mrr) })}\n`,
  );
}
