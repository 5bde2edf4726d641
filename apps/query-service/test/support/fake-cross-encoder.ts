import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const FAKE_CROSS_ENCODER = 'fake-cross-encoder';

/**
 * Installs the FAKE cross-encoder in `dir/fake-cross-encoder`: fixtures/fake-cross-encoder.onnx
 * has a BERT classifier's inputs and output but scores the passage segment as a bag of words
 * (2 per "lighthouse", 1 per "keeper"; see fixtures/make-fake-cross-encoder.py). The tokenizer is
 * the embedding model's, which `npm test` fetches.
 */
export function installFakeCrossEncoder(dir: string): void {
  const tokenizerDir = join(process.env['EMBEDDING_MODEL_DIR']!, 'all-MiniLM-L6-v2');
  const folder = join(dir, FAKE_CROSS_ENCODER);
  mkdirSync(join(folder, 'onnx'), { recursive: true });
  for (const file of ['tokenizer.json', 'tokenizer_config.json']) {
    copyFileSync(join(tokenizerDir, file), join(folder, file));
  }
  copyFileSync(
    join(__dirname, '..', 'fixtures', 'fake-cross-encoder.onnx'),
    join(folder, 'onnx', 'model.onnx'),
  );
  writeFileSync(
    join(folder, 'config.json'),
    JSON.stringify({
      model_type: 'bert',
      architectures: ['BertForSequenceClassification'],
      id2label: { 0: 'LABEL_0' },
      label2id: { LABEL_0: 0 },
    }),
  );
}
