#!/usr/bin/env bash
# `npm run bench -- query [--tenant <id>] [--rounds n]`, `npm run bench -- ingest` or
# `npm run bench -- large [--size-mb 50]` (one large document, peak memory per service) or
# `npm run bench -- empty [--documents 50000]` (emptying a knowledge base, timed) or
# `npm run bench -- formats` (the parser per format and OCR accuracy and speed, no services) or
# `npm run bench -- lexical` (BM25 scoring in memory at 100k and 1M synthetic chunks, no services) or
# `npm run bench -- scale --tenant <id> --copies <n>` (builds the tenant `query --scale <n>` benches, no services) or
# `npm run bench -- acl` (the access-control oracle, KB_ACL_ROUNDS=100000 by default) or
# `npm run bench -- drill` (backup, wipe, restore and repair of the whole of CISI): servers up,
# build, then the benchmark (`kb-tools bench`, tools/bench) against the running services (started
# for the run when `npm start` is not running them, so peak memory figures cover the run alone).
# The last line of output is one JSON object. The dataset is test/fixtures/cisi (CISI) unless KB_BENCH_DATASET names another.
# The services run on ports of their own, from KB_SERVICES_PORT_BASE (7400: HTTP 7401-7406, gRPC
# 7451 and 7461), clear of the defaults and of the e2e suites' ports.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
kind="${1:-}"
shift || true
# shellcheck source=infra/env.sh
source scripts/infra/env.sh
dataset="${KB_BENCH_DATASET:-test/fixtures/cisi}"
case "$kind" in
  query) command=(node tools/bench/dist/main.js bench query --dataset "$dataset" "$@") ;;
  ingest) command=(node tools/bench/dist/main.js bench ingest --dataset "$dataset" "$@") ;;
  large) command=(node tools/bench/dist/main.js bench large --dataset "$dataset" "$@") ;;
  formats)
    # The parser per format and OCR (accuracy, seconds per page), in process: no services.
    npx nx run-many -t build --output-style=static >/dev/null
    exec node tools/bench/dist/main.js bench formats "$@" ;;
  lexical)
    # BM25 scoring in memory on synthetic spaces of 100k and 1M chunks, in process: no services.
    npx nx run-many -t build --output-style=static >/dev/null
    exec node tools/bench/dist/main.js bench lexical "$@" ;;
  scale)
    # Builds (or resumes) `<tenant>-x<copies>` for `query --scale` without the services, so a long
    # build does not hold them: `npm run bench -- scale --tenant <id> --copies 500`.
    bash scripts/infra/up.sh >&2
    npx nx run-many -t build --output-style=static >/dev/null
    exec node tools/bench/dist/main.js bench scale "$@" ;;
  # Empties a knowledge base of 50,000 documents (seeded in SQL) through REST: under 30 s.
  empty) command=(node tools/bench/dist/main.js bench empty "$@") ;;
  acl)
    # The access-control oracle of test/e2e/access.e2e-spec.ts at scale: KB_ACL_ROUNDS searches,
    # reads and listings per seed (100,000 unless set), each checked; it starts its own services.
    bash scripts/infra/up.sh >&2
    npx nx run-many -t build --output-style=static >/dev/null
    export KB_ACL_ROUNDS="${KB_ACL_ROUNDS:-100000}"
    exec npx jest test/e2e/access.e2e-spec.ts --selectProjects e2e --runInBand \
      -t 'never returns what the caller may not read' "$@" ;;
  drill)
    # The backup and restore drill of test/e2e/backup-restore.e2e-spec.ts on the whole of CISI
    # (KB_DRILL_DOCUMENTS=all unless set): prints each phase's duration (docs/adr/0040).
    bash scripts/infra/up.sh >&2
    npx nx run-many -t build --output-style=static >/dev/null
    export KB_DRILL_DOCUMENTS="${KB_DRILL_DOCUMENTS:-all}"
    exec npx jest test/e2e/backup-restore.e2e-spec.ts --selectProjects e2e --runInBand --forceExit "$@" ;;
  *) echo "usage: npm run bench -- query [--tenant <id>] [--rounds <n>] | ingest [--concurrency <n>] | large [--size-mb <n>] | empty [--documents <n>] | formats [--lines <n>] | lexical [--sizes 100000,1000000] | scale --tenant <id> --copies <n> | acl | drill" >&2; exit 2 ;;
esac
bash scripts/infra/up.sh >&2
# ghz, the query bench's independent client (built once into $KB_HOME/bin).
bash scripts/infra/install-tools.sh >&2
export KB_GHZ="${KB_GHZ:-$KB_HOME/bin/ghz}"
npx nx run-many -t build --output-style=static >/dev/null
export KB_SERVICES_PORT_BASE="${KB_SERVICES_PORT_BASE:-7400}"
exec node scripts/with-services.js "${command[@]}"
