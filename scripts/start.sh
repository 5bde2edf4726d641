#!/usr/bin/env bash
# `npm start`: servers up, build, migrations, then all seven services in the foreground (Ctrl-C
# stops them), on the pinned Node (.nvmrc, installed on first use).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=infra/env.sh
source scripts/infra/env.sh
node scripts/lib/node-runtime.js
bash scripts/infra/up.sh
echo "building…"
npx nx run-many -t build --output-style=static >/dev/null
bash scripts/migrate.sh --no-build
exec node scripts/start-services.js
