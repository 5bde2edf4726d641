#!/usr/bin/env bash
# Regenerates the TypeScript for libs/contracts/proto with buf + ts-proto.
# With --check, fails when the committed generated code differs from a fresh generation.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# ts-proto runs on the pinned Node (.nvmrc), like everything else.
# shellcheck source=infra/node.sh
source "$root/scripts/infra/node.sh"
contracts="$root/libs/contracts"
buf="$root/node_modules/.bin/buf"

generate() { # $1: output folder
  (cd "$contracts" && "$buf" lint && "$buf" generate --template buf.gen.yaml -o "$1")
}

if [[ "${1:-}" == "--check" ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  generate "$tmp"
  if ! diff -r "$tmp/src/generated" "$contracts/src/generated" >/dev/null; then
    echo "proto: generated code in libs/contracts/src/generated is stale; run 'npm run proto:gen'" >&2
    diff -r "$tmp/src/generated" "$contracts/src/generated" | head -20 >&2
    exit 1
  fi
  echo "proto: generated code is up to date"
else
  rm -rf "$contracts/src/generated"
  generate "$contracts"
  echo "proto: generated libs/contracts/src/generated"
fi
