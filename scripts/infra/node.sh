# shellcheck shell=bash
# The pinned Node runtime (docs/adr/0035): the version in .nvmrc, installed once into
# $KB_HOME/node-<version>/bin from the npm package node-<os>-<arch> (the official binary, republished
# as a package), then put first on PATH. Sourced by env.sh, so `npm start`, `npm test`, `.ci/run`
# and every infra script run node, npx and npm under it; the system Node only has to run npm for
# this one `npm pack`. KB_NODE_VERSION overrides the pin; KB_NODE_VERSION=system keeps PATH as is.

export KB_HOME="${KB_HOME:-$HOME/.cache/kb}"
_kb_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export KB_NODE_VERSION="${KB_NODE_VERSION:-$(tr -d '[:space:]v' <"$_kb_root/.nvmrc")}"

if [[ "$KB_NODE_VERSION" != system ]]; then
  _kb_node_dir="$KB_HOME/node-$KB_NODE_VERSION"
  if [[ "$("$_kb_node_dir/bin/node" --version 2>/dev/null)" != "v$KB_NODE_VERSION" ]]; then
    case "$(uname -m)" in
      x86_64) _kb_arch=x64 ;;
      aarch64 | arm64) _kb_arch=arm64 ;;
      *) _kb_arch="$(uname -m)" ;;
    esac
    _kb_package="node-$(uname -s | tr '[:upper:]' '[:lower:]')-$_kb_arch@$KB_NODE_VERSION"
    echo "node: installing $_kb_package into $_kb_node_dir (once)" >&2
    # Unpacked beside its final place, so that the last step is one rename.
    mkdir -p "$KB_HOME" && _kb_tmp="$(mktemp -d "$KB_HOME/.node-XXXXXX")"
    # In a subshell, so that any failure ends in the message below (and `source` returning 1).
    if (cd "$_kb_tmp" && npm pack "$_kb_package" --silent >/dev/null &&
      tar -xzf ./*.tgz --strip-components=1 package/bin/node package/LICENSE &&
      [[ "$(./bin/node --version)" == "v$KB_NODE_VERSION" ]]); then
      rm -f "$_kb_tmp"/*.tgz && chmod 755 "$_kb_tmp"
      rm -rf "$_kb_node_dir" && mv "$_kb_tmp" "$_kb_node_dir"
    else
      rm -rf "$_kb_tmp"
      echo "node: error: could not install $_kb_package" >&2
      return 1
    fi
  fi
  case ":$PATH:" in
    *":$_kb_node_dir/bin:"*) ;;
    *) export PATH="$_kb_node_dir/bin:$PATH" ;;
  esac
  # Forget where node was found before, so this shell runs the pinned one from now on.
  hash -r
fi
unset _kb_root _kb_node_dir _kb_arch _kb_package _kb_tmp
