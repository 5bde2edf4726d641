// Reads a TREC run file (`qid Q0 docid rank score tag`), as `kb eval` writes one per mode.
'use strict';
const fs = require('node:fs');

/** qid → [{doc, rank, score}] best first. */
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

module.exports = { readRun };
