// Offline fusion sweep over the TREC run files of one or more judged collections (what
// `kb eval --mode semantic,lexical --run-out <file>` writes): scores every candidate fusion rule at
// document level with the same metrics as `kb eval`, so a rule can be chosen without re-ingesting,
// and ranks the rules by their WORST margin over the better single mode across the collections
// (a rule chosen on one collection is what issue 14 warns against).
// Usage:
//   node scripts/fusion-sweep.js --set <name>=<qrels>,<semantic run>,<lexical run> [--set …]
//   node scripts/fusion-sweep.js --qrels <qrels/test.tsv> --semantic <run> --lexical <run>
// Prints one JSON line per rule: each collection's nDCG@10 (Recall@100 and MRR@10 with --all) and
// `worst`, the smallest relative gain in nDCG@10 over the better single mode of a collection.
// (The service fuses chunks; the eval keeps each document's best chunk. For corpora of one chunk
// per document the two agree; otherwise this is an estimate.)
'use strict';
const fs = require('node:fs');
const { readRun } = require('./trec-run');

const argv = process.argv.slice(2);
const values = (name) =>
  argv.flatMap((a, i) => (a === `--${name}` && argv[i + 1] ? [argv[i + 1]] : []));
const one = (name) => values(name)[0];

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

const minmax = (list) => {
  const s = list.map((x) => x.score);
  const max = Math.max(...s);
  const min = Math.min(...s);
  return new Map(list.map((x) => [x.doc, max === min ? 1 : (x.score - min) / (max - min)]));
};
const zscore = (list) => {
  const s = list.map((x) => x.score);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  const sd = Math.sqrt(s.reduce((a, b) => a + (b - mean) ** 2, 0) / s.length) || 1;
  return new Map(list.map((x) => [x.doc, (x.score - mean) / sd]));
};
const rrf = (k) => (list) => new Map(list.map((x, i) => [x.doc, 1 / (k + i + 1)]));

/** Weighted sum of two normalized lists; a document missing from a list gets that list's `floor`. */
function combine(a, b, wa, wb, { floor = 'zero', mnz = false } = {}) {
  const low = (m) => (floor === 'min' && m.size ? Math.min(...m.values()) : 0);
  const fa = low(a);
  const fb = low(b);
  return [...new Set([...a.keys(), ...b.keys()])]
    .map((d) => {
      const s = wa * (a.get(d) ?? fa) + wb * (b.get(d) ?? fb);
      return { d, s: mnz ? s * ((a.has(d) ? 1 : 0) + (b.has(d) ? 1 : 0)) : s };
    })
    .sort((x, y) => y.s - x.s)
    .map((x) => x.d);
}

const words = (text) => text.trim().split(/\s+/).filter(Boolean).length;

/**
 * How far a list's best score stands out from the rest of its candidates (its top z-score, 0 when
 * flat): a per-query confidence that needs no judged data.
 */
const standout = (list, depth = list.length) => {
  const top = list.slice(0, depth);
  if (top.length < 2) return 0;
  const z = zscore(top);
  return Math.max(0, z.get(top[0].doc) ?? 0);
};

/** Every candidate rule: name → (semantic list, lexical list, query text) → ranking. */
function candidateRules() {
  const rules = [
    { name: 'semantic', rank: (s) => s.map((x) => x.doc) },
    { name: 'lexical', rank: (_, l) => l.map((x) => x.doc) },
  ];
  for (const alpha of [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]) {
    rules.push({
      name: `convex-minmax-a${alpha}`,
      rank: (s, l) => combine(minmax(s), minmax(l), alpha, 1 - alpha),
    });
    rules.push({
      name: `convex-zscore-min-a${alpha}`,
      rank: (s, l) => combine(zscore(s), zscore(l), alpha, 1 - alpha, { floor: 'min' }),
    });
    rules.push({
      name: `combmnz-minmax-a${alpha}`,
      rank: (s, l) => combine(minmax(s), minmax(l), alpha, 1 - alpha, { mnz: true }),
    });
  }
  for (const k of [5, 10, 20, 60]) {
    for (const w of [0.3, 0.4, 0.5, 0.6, 0.7]) {
      rules.push({
        name: `rrf-k${k}-w${w}`,
        rank: (s, l) => combine(rrf(k)(s), rrf(k)(l), w, 1 - w),
      });
    }
  }
  // Per-query weights from each list's own confidence (its top hit's z-score).
  for (const norm of ['minmax', 'rrf10', 'rrf60']) {
    const n = norm === 'minmax' ? minmax : rrf(Number(norm.slice(3)));
    for (const prior of [0.5, 0.55, 0.6, 0.65, 0.7]) {
      for (const depth of [20, 100]) {
        rules.push({
          name: `standout${depth}-${norm}-p${prior}`,
          rank: (s, l) => {
            const cs = prior * standout(s, depth);
            const cl = (1 - prior) * standout(l, depth);
            const ws = cs + cl > 0 ? cs / (cs + cl) : prior;
            return combine(n(s), n(l), ws, 1 - ws);
          },
        });
      }
    }
  }
  // Query-length weights: short queries (≤ n words) lean one way, longer ones the other.
  for (const n of [4, 6, 8]) {
    for (const [short, long] of [
      [0.4, 0.7],
      [0.5, 0.7],
      [0.3, 0.7],
      [0.5, 0.8],
    ]) {
      rules.push({
        name: `length${n}-minmax-a${short}/${long}`,
        rank: (s, l, q) => {
          const a = words(q) <= n ? short : long;
          return combine(minmax(s), minmax(l), a, 1 - a);
        },
      });
      rules.push({
        name: `length${n}-rrf10-w${short}/${long}`,
        rank: (s, l, q) => {
          const a = words(q) <= n ? short : long;
          return combine(rrf(10)(s), rrf(10)(l), a, 1 - a);
        },
      });
    }
  }
  return rules;
}

function loadSets() {
  const sets = values('set').map((spec) => {
    const [name, files] = spec.split('=');
    const [qrels, semantic, lexical, queries] = files.split(',');
    return { name, qrels, semantic, lexical, queries };
  });
  if (sets.length === 0) {
    sets.push({
      name: 'default',
      qrels: one('qrels'),
      semantic: one('semantic'),
      lexical: one('lexical'),
      queries: one('queries'),
    });
  }
  return sets.map((set) => {
    if (!set.qrels || !set.semantic || !set.lexical) {
      throw new Error(
        'each --set needs <name>=<qrels>,<semantic run>,<lexical run>[,<queries.jsonl>]',
      );
    }
    // Query texts (for the length rules): queries.jsonl beside qrels/ unless named.
    const queryFile = set.queries ?? set.qrels.replace(/qrels\/[^/]+$/, 'queries.jsonl');
    const texts = new Map(
      fs
        .readFileSync(queryFile, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l))
        .map((q) => [String(q._id), q.text]),
    );
    return {
      name: set.name,
      qrels: readQrels(set.qrels),
      semantic: readRun(set.semantic),
      lexical: readRun(set.lexical),
      texts,
    };
  });
}

const sets = loadSets();
const all = argv.includes('--all');
const round = (x) => Math.round(x * 1e4) / 1e4;
const results = candidateRules().map((rule) => {
  const per = {};
  for (const set of sets) {
    const ids = [...set.qrels.keys()];
    const mean = (metric) =>
      ids.reduce(
        (sum, q) =>
          sum +
          metric(
            rule.rank(set.semantic.get(q) ?? [], set.lexical.get(q) ?? [], set.texts.get(q) ?? ''),
            set.qrels.get(q),
          ),
        0,
      ) / ids.length;
    per[set.name] = all
      ? {
          'ndcg@10': round(mean(ndcg)),
          'recall@100': round(mean(recall)),
          'mrr@10': round(mean(mrr)),
        }
      : round(mean(ndcg));
  }
  return { rule: rule.name, per };
});
const ndcgOf = (r, name) => (all ? r.per[name]['ndcg@10'] : r.per[name]);
const best = Object.fromEntries(
  sets.map((s) => [s.name, Math.max(ndcgOf(results[0], s.name), ndcgOf(results[1], s.name))]),
);
for (const r of results) {
  r.worst = round(Math.min(...sets.map((s) => ndcgOf(r, s.name) / best[s.name] - 1)));
}
for (const r of [...results].sort((a, b) => b.worst - a.worst)) {
  process.stdout.write(`${JSON.stringify({ rule: r.rule, worst: r.worst, ...r.per })}\n`);
}
