#!/usr/bin/env bash
# `npm run bench -- query [--tenant <id>] [--rounds n]`, `npm run bench -- ingest` or
# `npm run bench -- large [--size-mb 50]` (one large document, peak memory per service): servers up,
# build, then the benchmark against the running services (started for the run when `npm start`
# is not running them, so peak memory figures cover the run alone).
# The last line of output is one JSON object. Datasets come from ../shared/datasets (CISI).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
kind="${1:-}"
shift || true
# shellcheck source=infra/env.sh
source scripts/infra/env.sh
dataset="${KB_BENCH_DATASET:-../shared/datasets/cisi}"
case "$kind" in
  query) command=(node apps/kb-cli/dist/main.js bench-query --dataset "$dataset" "$@") ;;
  ingest) command=(node apps/kb-cli/dist/main.js bench-ingest --dataset "$dataset" "$@") ;;
  large) command=(node apps/kb-cli/dist/main.js bench-large --dataset "$dataset" "$@") ;;
  *) echo "usage: npm run bench -- query [--tenant <id>] [--rounds <n>] | ingest [--concurrency <n>] | large [--size-mb <n>]" >&2; exit 2 ;;
esac
bash scripts/infra/up.sh >&2
npx nx run-many -t build --output-style=static >/dev/null
exec node scripts/with-services.js "${command[@]}"
