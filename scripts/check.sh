#!/usr/bin/env bash
# `npm run check`: everything a reviewer would run: format, shellcheck, lint (zero warnings), typecheck,
# generated-code freshness, then the whole test suite.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# On the pinned Node (.nvmrc, docs/adr/0035), installed on first use.
# shellcheck source=infra/node.sh
source scripts/infra/node.sh
npx prettier --check . --log-level warn
# Every script through ShellCheck (a Debian package); settings in .shellcheckrc.
command -v shellcheck >/dev/null || { source scripts/infra/lib.sh && apt_install shellcheck; }
git ls-files -z -- '*.sh' .ci/run | xargs -0 shellcheck
npx nx show projects >/dev/null
npx eslint . --max-warnings=0
node scripts/check-doc-links.js
npx tsc -b tsconfig.json
npx tsc -p tsconfig.spec.json
bash scripts/proto-gen.sh --check
bash scripts/openapi-gen.sh --check
bash scripts/test.sh
