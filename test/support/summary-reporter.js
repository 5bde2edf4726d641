// Prints the closing line CI reads: "N passed, N failed" (and skipped when there are any), after
// the Node version the tests ran on ("node vX.Y.Z").
// `npm test` runs Jest twice (parallel tiers, then e2e): with KB_TEST_TALLY set, each run prints
// its own line under a label and appends its counts to that file, and `node summary-reporter.js
// <file> <runs>` prints the total last.
const fs = require('node:fs');

function line({ passed, failed, skipped }) {
  return `${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : '');
}

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const counts = {
      passed: results.numPassedTests,
      failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
      skipped: results.numPendingTests + results.numTodoTests,
    };
    const tally = process.env.KB_TEST_TALLY;
    if (tally) {
      fs.appendFileSync(tally, `${JSON.stringify(counts)}\n`);
      process.stdout.write(`\nnode ${process.version}\nthis-run: ${line(counts)}\n`);
    } else {
      process.stdout.write(`\nnode ${process.version}\n${line(counts)}\n`);
    }
  }
}

if (require.main === module) {
  const runs = fs
    .readFileSync(process.argv[2], 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((text) => JSON.parse(text));
  const total = { passed: 0, failed: 0, skipped: 0 };
  for (const run of runs) for (const key of Object.keys(total)) total[key] += run[key];
  // A Jest run that crashed before it could report counts as one failure.
  const expected = Number(process.argv[3] ?? runs.length);
  if (runs.length < expected) total.failed += expected - runs.length;
  process.stdout.write(`\nnode ${process.version}\n${line(total)}\n`);
}

module.exports = SummaryReporter;
