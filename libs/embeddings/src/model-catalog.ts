/**
 * The local ONNX sentence encoders the project's setup installs (scripts/infra/fetch-model.sh),
 * with how each was trained to be used: its pooling and the prefixes it expects before a query
 * and before a passage. A model missing from the catalogue is run with mean pooling and no
 * prefixes (and its pooling can be set with EMBEDDING_POOLING).
 */
export interface OnnxModelSpec {
  pooling: 'mean' | 'cls';
  /** Put before every search query. */
  queryPrefix: string;
  /** Put before every passage (chunk) that is indexed. */
  passagePrefix: string;
  /** Transformer layers: ingest cost grows with them (docs/adr/0028). */
  layers: number;
}

export const ONNX_MODELS: Readonly<Record<string, OnnxModelSpec>> = {
  // sentence-transformers: symmetric, no prefixes.
  'all-MiniLM-L6-v2': { pooling: 'mean', queryPrefix: '', passagePrefix: '', layers: 6 },
  // BAAI: the retrieval instruction goes before short queries only; CLS pooling.
  'bge-small-en-v1.5': {
    pooling: 'cls',
    queryPrefix: 'Represent this sentence for searching relevant passages: ',
    passagePrefix: '',
    layers: 12,
  },
  // intfloat: trained with "query: " / "passage: " on every input; mean pooling.
  'e5-small-v2': {
    pooling: 'mean',
    queryPrefix: 'query: ',
    passagePrefix: 'passage: ',
    layers: 12,
  },
};

export function onnxModelSpec(name: string): OnnxModelSpec | undefined {
  return Object.hasOwn(ONNX_MODELS, name) ? ONNX_MODELS[name] : undefined;
}
