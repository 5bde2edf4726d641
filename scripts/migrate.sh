#!/usr/bin/env bash
# `npm run migrate`: builds, then applies every schema's migrations, one service after another in a
# fixed order (each service's dist/migrate.js; the Helm hook runs the same files in the same order).
# --no-build: the caller has just built (scripts/start.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=infra/node.sh
source scripts/infra/node.sh
if [[ "${1:-}" != "--no-build" ]]; then
  npx nx run-many -t build --output-style=static >/dev/null
fi
# Each one as its own PostgreSQL role (docs/adr/0031, Locally), like the service itself; the shared
# DATABASE_URL with KB_SHARED_DB_ROLE=1.
for service in document-service acl-service embedding-service indexing-service webhook-service; do
  node scripts/lib/services.js run "$service" node "apps/${service}/dist/migrate.js"
done
