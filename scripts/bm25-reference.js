// Plain BM25 reference on a BEIR folder, computed the way the CISI dataset README's reference
// was: Okapi BM25 with k1 = 0.9, b = 0.4 (the Anserini / Pyserini defaults), Lucene's idf
// ln(1 + (N − df + 0.5) / (df + 0.5)), lowercase word tokens ([a-z0-9]+) of title and text, the
// short English stop list Lucene uses by default (33 words), no stemming. Scores with the same
// metric definitions as `kb eval` (nDCG@10 with linear gains, Recall@100, MRR@10).
// Usage: node scripts/bm25-reference.js <BEIR folder> [--run-out <trec file>]
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const STOP = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(
    ' ',
  ),
);
const K1 = 0.9;
const B = 0.4;

const tokens = (text) => (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((t) => !STOP.has(t));
const jsonl = (file) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));

const folder = process.argv[2];
if (!folder) throw new Error('usage: bm25-reference.js <BEIR folder> [--run-out <file>]');
const runOutAt = process.argv.indexOf('--run-out');
const runOut = runOutAt === -1 ? undefined : process.argv[runOutAt + 1];

const corpus = jsonl(path.join(folder, 'corpus.jsonl'));
const queries = jsonl(path.join(folder, 'queries.jsonl'));
const qrels = new Map();
for (const [i, line] of fs
  .readFileSync(path.join(folder, 'qrels', 'test.tsv'), 'utf8')
  .split('\n')
  .entries()) {
  const [q, d, s] = line.trim().split('\t');
  if (!q || !d || s === undefined || (i === 0 && Number.isNaN(Number(s)))) continue;
  if (!qrels.has(q)) qrels.set(q, new Map());
  qrels.get(q).set(d, Number(s));
}

// Inverted index: term → [[doc index, tf]].
const postings = new Map();
const lengths = corpus.map((doc, i) => {
  const terms = tokens(`${doc.title ?? ''} ${doc.text ?? ''}`);
  const tf = new Map();
  for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
  for (const [t, n] of tf) {
    if (!postings.has(t)) postings.set(t, []);
    postings.get(t).push([i, n]);
  }
  return terms.length;
});
const N = corpus.length;
const avgdl = lengths.reduce((a, b) => a + b, 0) / N;

function search(text, k = 100) {
  const scores = new Map();
  for (const t of tokens(text)) {
    const list = postings.get(t);
    if (!list) continue;
    const idf = Math.log(1 + (N - list.length + 0.5) / (list.length + 0.5));
    for (const [i, tf] of list) {
      const s = (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * lengths[i]) / avgdl));
      scores.set(i, (scores.get(i) ?? 0) + s);
    }
  }
  return [...scores]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, k)
    .map(([i, s]) => ({ doc: String(corpus[i]._id), score: s }));
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

const judgedQueries = queries.filter((q) => qrels.has(String(q._id)));
const sums = { ndcg: 0, recall: 0, mrr: 0 };
const lines = [];
for (const q of judgedQueries) {
  const hits = search(q.text);
  const ranking = hits.map((h) => h.doc);
  const judged = qrels.get(String(q._id));
  sums.ndcg += ndcg(ranking, judged);
  sums.recall += recall(ranking, judged);
  sums.mrr += mrr(ranking, judged);
  hits.forEach((h, i) => lines.push(`${q._id} Q0 ${h.doc} ${i + 1} ${h.score.toFixed(6)} bm25`));
}
if (runOut) fs.writeFileSync(runOut, `${lines.join('\n')}\n`);
const mean = (x) => Math.round((x / judgedQueries.length) * 1e4) / 1e4;
process.stdout.write(
  `${JSON.stringify({
    dataset: path.basename(path.resolve(folder)),
    rule: 'bm25 k1=0.9 b=0.4 no stemming',
    documents: N,
    queries: judgedQueries.length,
    'ndcg@10': mean(sums.ndcg),
    'recall@100': mean(sums.recall),
    'mrr@10': mean(sums.mrr),
  })}\n`,
);
