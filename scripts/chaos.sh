#!/usr/bin/env bash
# `npm run chaos [-- --faults <names> --documents <n>]`: fault injection during an ingest
# (`kb-tools chaos --help` says what and checks what; tools/bench/src/chaos). It kills and stops
# the local servers that infra:up started, so run it on a machine (or a KB_HOME and port block of
# its own: KB_KAFKA_PORT, KB_PG_PORT, …) that nothing else is using.
# Not part of `npm test`; `test/e2e/chaos.e2e-spec.ts` runs a small version.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=infra/env.sh
source scripts/infra/env.sh
bash scripts/infra/up.sh >&2
npx nx run-many -t build --output-style=static >/dev/null
exec node tools/bench/dist/main.js chaos "$@"
