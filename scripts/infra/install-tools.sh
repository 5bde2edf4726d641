#!/usr/bin/env bash
# Tools for the deployment tests, installed once into $KB_HOME/bin and $KB_HOME/venv:
# - helm, built from the Go module proxy (`helm lint`, `helm template` work offline);
# - kubernetes-validate from PyPI, which bundles the Kubernetes JSON schemas, so every rendered
#   object is validated with no network access.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HELM_VERSION="${KB_HELM_VERSION:-v3.22.0}"
KUBERNETES_VALIDATE_VERSION="${KB_KUBERNETES_VALIDATE_VERSION:-1.37.0}"
bin="$KB_HOME/bin"
venv="$KB_HOME/venv"
mkdir -p "$bin"

# `go install` leaves no version in `helm version`; the module version is in the build info.
if ! go version -m "$bin/helm" 2>/dev/null | grep -q "helm.sh/helm/v3[[:space:]]*${HELM_VERSION}"; then
  command -v go >/dev/null || die "Go is required to build helm"
  say "building helm $HELM_VERSION with go install (once)"
  GOBIN="$bin" go install "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}" >"$KB_LOG_DIR/go-install-helm.log" 2>&1 ||
    die "go install helm failed; see $KB_LOG_DIR/go-install-helm.log"
fi

if ! "$venv/bin/kubernetes-validate" --version 2>/dev/null | grep -q "$KUBERNETES_VALIDATE_VERSION"; then
  say "installing kubernetes-validate $KUBERNETES_VALIDATE_VERSION (once)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "kubernetes-validate==${KUBERNETES_VALIDATE_VERSION}" >"$KB_LOG_DIR/pip-kubernetes-validate.log" 2>&1 ||
    die "pip install kubernetes-validate failed; see $KB_LOG_DIR/pip-kubernetes-validate.log"
fi
say "helm                $HELM_VERSION ($bin/helm)"
say "kubernetes-validate $("$venv/bin/kubernetes-validate" --version 2>&1 | tail -1)"
