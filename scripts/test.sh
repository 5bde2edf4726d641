#!/usr/bin/env bash
# `npm test`: starts the real servers when they are not running, builds, and runs every Jest
# project (unit, integration, e2e). Extra arguments go to Jest, e.g. `npm test -- --selectProjects unit`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=infra/env.sh
source scripts/infra/env.sh
bash scripts/infra/up.sh
bash scripts/infra/install-tools.sh
npx nx run-many -t build --output-style=static >/dev/null
# --forceExit: a service left running by a failed e2e setup must not hang the run.
exec npx jest --runInBand --forceExit "$@"
