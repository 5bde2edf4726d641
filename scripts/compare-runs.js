// Paired comparison of two TREC runs of one judged collection (what `kb eval --run-out` writes):
// nDCG@10 of each, the mean per-query difference (B − A), its standard error over the queries,
// t = difference / SE, and how many queries B wins and loses. A difference within about two
// standard errors is not evidence that B ranks better (docs/adr/0028, "How much a figure can move").
// Usage (after `npm run build`):
//   node scripts/compare-runs.js --dataset <BEIR folder> <run A> <run B>
'use strict';
const { loadBeir } = require('../apps/kb-cli/dist/eval/beir');
const { ndcgAt } = require('../apps/kb-cli/dist/eval/metrics');
const { readRun } = require('./trec-run');

async function main() {
  const argv = process.argv.slice(2);
  const at = argv.indexOf('--dataset');
  const folder = at >= 0 ? argv[at + 1] : undefined;
  const runs = argv.filter((_, i) => i !== at && i !== at + 1);
  if (!folder || runs.length !== 2) {
    process.stderr.write('usage: compare-runs.js --dataset <BEIR folder> <run A> <run B>\n');
    process.exit(2);
  }
  const { qrels } = await loadBeir(folder);
  const [a, b] = runs.map((file) => readRun(file));
  const scored = [...qrels]
    .filter(([, judged]) => [...judged.values()].some((grade) => grade > 0))
    .map(([query, judged]) => {
      const ranking = (run) => (run.get(query) ?? []).map((hit) => hit.doc);
      return [ndcgAt(10, ranking(a), judged), ndcgAt(10, ranking(b), judged)];
    });
  const n = scored.length;
  const mean = (values) => values.reduce((sum, v) => sum + v, 0) / values.length;
  const differences = scored.map(([x, y]) => y - x);
  const difference = mean(differences);
  const variance =
    differences.reduce((sum, d) => sum + (d - difference) ** 2, 0) / Math.max(1, n - 1);
  const se = Math.sqrt(variance / n);
  const round = (value) => Math.round(value * 1e4) / 1e4;
  process.stdout.write(
    `${JSON.stringify({
      queries: n,
      'ndcg@10_a': round(mean(scored.map(([x]) => x))),
      'ndcg@10_b': round(mean(scored.map(([, y]) => y))),
      difference: round(difference),
      standard_error: round(se),
      t: se > 0 ? Math.round((difference / se) * 100) / 100 : null,
      b_wins: differences.filter((d) => d > 1e-9).length,
      b_loses: differences.filter((d) => d < -1e-9).length,
    })}\n`,
  );
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
