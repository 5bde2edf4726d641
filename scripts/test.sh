#!/usr/bin/env bash
# `npm test`: starts the real servers when they are not running, builds, and runs every Jest
# project. Unit, deploy and integration files run on both cores: integration files are isolated
# (each migrates a throw-away schema and uses its own topics, groups and namespaces). End-to-end
# files boot all seven services on fixed ports, so they run one at a time, after the others. The last
# line is the total over both runs: "N passed, N failed".
# Extra arguments go to one Jest run, e.g. `npm test -- --selectProjects unit`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=infra/env.sh
source scripts/infra/env.sh
bash scripts/infra/up.sh
bash scripts/infra/install-tools.sh
npx nx run-many -t build --output-style=static >/dev/null
# --forceExit: a service left running by a failed e2e setup must not hang the run.
if (($# > 0)); then exec npx jest --runInBand --forceExit "$@"; fi

KB_TEST_TALLY=$(mktemp)
export KB_TEST_TALLY
trap 'rm -f "$KB_TEST_TALLY"' EXIT
status=0
npx jest --forceExit --maxWorkers=2 --selectProjects unit deploy integration || status=$?
npx jest --forceExit --runInBand --selectProjects e2e || status=$?
node test/support/summary-reporter.js "$KB_TEST_TALLY" 2
exit "$status"
