// The Node runtime check (docs/adr/0035): the running Node must be at least the major pinned in
// .nvmrc. `node scripts/lib/node-runtime.js` prints "node vX.Y.Z" and exits 1 when it is older;
// Jest's global setup calls check() so that no test runs on an older Node.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

function pinned() {
  return readFileSync(join(__dirname, '..', '..', '.nvmrc'), 'utf8')
    .trim()
    .replace(/^v/, '');
}

function major(version) {
  return Number(version.replace(/^v/, '').split('.')[0]);
}

/** Throws when the running Node is older than the pinned major; returns "node vX.Y.Z". */
function check(version = process.version) {
  const want = pinned();
  if (major(version) < major(want)) {
    throw new Error(
      `node ${version} is older than the pinned Node ${want} (.nvmrc): ` +
        'run through npm start / npm test, or source scripts/infra/env.sh, which install and use it',
    );
  }
  return `node ${version}`;
}

if (require.main === module) {
  try {
    process.stdout.write(`${check()}\n`);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

module.exports = { check, pinned };
