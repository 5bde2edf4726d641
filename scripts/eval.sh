#!/usr/bin/env bash
# `npm run eval -- --dataset <folder> [--mode hybrid|semantic|lexical[,…]] [--run-out <file>]`
# Servers up, build, then the BEIR evaluation (`kb-tools eval`, tools/bench) through the public
# APIs (starting the services when `npm start` is not running them). Prints one JSON line per mode.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=infra/env.sh
source scripts/infra/env.sh
bash scripts/infra/up.sh >&2
npx nx run-many -t build --output-style=static >/dev/null
exec node scripts/with-services.js node tools/bench/dist/main.js eval "$@"
