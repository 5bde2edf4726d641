#!/usr/bin/env bash
# `npm test`: starts the real servers when they are not running, builds, and runs every Jest
# project. Unit, deploy and integration files run on both cores: integration files are isolated
# (each migrates a throw-away schema and uses its own topics, groups and namespaces). End-to-end
# files boot all seven services on fixed ports, so they run one at a time, after the others. The last
# line is the total over both runs: "N passed, N failed".
# Extra arguments go to one Jest run, e.g. `npm test -- --selectProjects unit`.
# `npm run test:unit` (`--unit`) runs the unit tier alone: no servers, no tools, no build.
# Everything runs on the pinned Node (.nvmrc, docs/adr/0035), installed on first use.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ "${1:-}" == --unit ]]; then
  shift
  # shellcheck source=infra/node.sh
  source scripts/infra/node.sh
  node scripts/lib/node-runtime.js
  exec npx jest --selectProjects unit --maxWorkers=2 "$@"
fi
# shellcheck source=infra/env.sh
source scripts/infra/env.sh
node scripts/lib/node-runtime.js
bash scripts/infra/up.sh
# helm, kubeconform and the schemas for test/deploy; ghz for apps/kb-cli/test/ghz.int-spec.ts.
bash scripts/infra/install-tools.sh
npx nx run-many -t build --output-style=static >/dev/null
# --forceExit: a service left running by a failed e2e setup must not hang the run.
if (($# > 0)); then exec npx jest --runInBand --forceExit "$@"; fi

KB_TEST_TALLY=$(mktemp)
export KB_TEST_TALLY
trap 'rm -f "$KB_TEST_TALLY"' EXIT
status=0
npx jest --forceExit --maxWorkers=2 --selectProjects unit deploy integration || status=$?
# The e2e suites start from the topics' ends (scripts/infra/kafka-groups-at-ends.js).
node scripts/infra/kafka-groups-at-ends.js
# The integration files migrate as the admin (kb): on a fresh machine the vector tables they
# create in kb_vectors' public schema belong to kb, and the e2e services run as their own roles
# (indexing-service must own a vector table to add a partition per index space). up.sh gives
# them to the services' roles again (scripts/infra/pg-roles.sql); with everything up it takes
# well under a second.
bash scripts/infra/up.sh >/dev/null
npx jest --forceExit --runInBand --selectProjects e2e || status=$?
node test/support/summary-reporter.js "$KB_TEST_TALLY" 2
exit "$status"
