#!/usr/bin/env bash
# Regenerates libs/api-client from the OpenAPI documents the services serve: a snapshot of each
# (libs/api-client/openapi/<service>.json, written from the constant its openapi.controller
# exports) and the types openapi-typescript generates from it (libs/api-client/src/generated/).
# With --check, fails when the committed snapshots or types differ from a fresh generation.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lib="$root/libs/api-client"
bin="$root/node_modules/.bin"

# service name → the module (under apps/<service>-service/dist) and the constant it exports
services=(
  "document:document-service/dist/openapi.controller.js:DOCUMENT_OPENAPI"
  "query:query-service/dist/openapi.controller.js:QUERY_OPENAPI"
  "acl:acl-service/dist/openapi.controller.js:ACL_OPENAPI"
  "webhook:webhook-service/dist/openapi.controller.js:WEBHOOK_OPENAPI"
  "embedding:embedding-service/dist/openai/openapi.controller.js:EMBEDDING_OPENAPI"
)

generate() { # $1: output folder (gets openapi/ and src/generated/)
  mkdir -p "$1/openapi" "$1/src/generated"
  for entry in "${services[@]}"; do
    IFS=: read -r name module constant <<<"$entry"
    # shellcheck disable=SC2016 # the single-quoted text is JavaScript, not shell
    node -e '
      const [file, constant, out] = process.argv.slice(1);
      const document = require(file)[constant];
      if (!document) throw new Error(`${file} exports no ${constant}`);
      require("node:fs").writeFileSync(out, JSON.stringify(document, null, 2) + "\n");
    ' "$root/apps/$module" "$constant" "$1/openapi/$name.json"
    "$bin/openapi-typescript" "$1/openapi/$name.json" -o "$1/src/generated/$name.ts" \
      --empty-objects-unknown >/dev/null
  done
  "$bin/prettier" --log-level warn --write "$1/openapi" "$1/src/generated"
}

# The services' build output is what the snapshots come from (tsc -b builds only what changed).
(cd "$root" && "$bin/tsc" -b apps/document-service apps/query-service apps/acl-service \
  apps/webhook-service apps/embedding-service)

if [[ "${1:-}" == "--check" ]]; then
  tmp="$(mktemp -d "$lib/.openapi-gen.XXXXXX")" # inside the repo: prettier reads its config
  trap 'rm -rf "$tmp"' EXIT
  generate "$tmp"
  stale=0
  for folder in openapi src/generated; do
    if ! diff -r "$tmp/$folder" "$lib/$folder" >/dev/null; then
      echo "openapi: libs/api-client/$folder is stale; run 'npm run openapi:gen'" >&2
      diff -r "$tmp/$folder" "$lib/$folder" | head -20 >&2
      stale=1
    fi
  done
  [[ $stale == 0 ]] || exit 1
  echo "openapi: snapshots and generated types are up to date"
else
  rm -rf "$lib/openapi" "$lib/src/generated"
  generate "$lib"
  echo "openapi: generated libs/api-client/openapi and libs/api-client/src/generated"
fi
