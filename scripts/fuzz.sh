#!/usr/bin/env bash
# `npm run fuzz`: property-based fuzzing of every REST service's API with schemathesis, driven by
# each service's own /openapi.json. Servers up, build, the services started for the run (or the
# ones `npm start` runs), then `kb-tools fuzz` (tools/bench/src/fuzz). Not part of `npm test`:
# it takes minutes.
# Options (environment): KB_FUZZ_MAX_EXAMPLES (default 60 per operation), KB_FUZZ_SERVICES
# (default "document query acl embedding webhook"). The last line of output is one JSON object.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=infra/env.sh
source scripts/infra/env.sh

SCHEMATHESIS_VERSION=4.32.5
venv="$KB_HOME/venv-fuzz"
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
  echo "fuzz: installing schemathesis $SCHEMATHESIS_VERSION into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "schemathesis==$SCHEMATHESIS_VERSION" >&2
fi
export KB_SCHEMATHESIS="$venv/bin/schemathesis"

bash scripts/infra/up.sh >&2
npx nx run-many -t build --output-style=static >/dev/null

# query-service's /v1/rerank answers 503 cross_encoder_not_loaded without a cross-encoder, which
# schemathesis counts as a server error and which keeps the route's own code from being fuzzed.
# The services started for the run get the FAKE cross-encoder of query-service's tests (a BERT
# classifier's inputs and output; its scores mean nothing, the route's handling is what is fuzzed).
# Services that `npm start` already runs are used as they are.
reranker_dir="$KB_HOME/fuzz/reranker"
fake="$reranker_dir/fake-cross-encoder"
mkdir -p "$fake/onnx"
cp "$EMBEDDING_MODEL_DIR/all-MiniLM-L6-v2/tokenizer.json" \
  "$EMBEDDING_MODEL_DIR/all-MiniLM-L6-v2/tokenizer_config.json" "$fake/"
cp apps/query-service/test/fixtures/fake-cross-encoder.onnx "$fake/onnx/model.onnx"
printf '%s\n' '{"model_type":"bert","architectures":["BertForSequenceClassification"],"id2label":{"0":"LABEL_0"},"label2id":{"LABEL_0":0}}' \
  > "$fake/config.json"
export RERANKER_MODEL=fake-cross-encoder RERANKER_MODEL_DIR="$reranker_dir"
exec node scripts/with-services.js node tools/bench/dist/main.js fuzz "$@"
