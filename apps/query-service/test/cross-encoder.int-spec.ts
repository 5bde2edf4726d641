import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * onnxruntime checks tensor types against the native realm's Float32Array, which Jest's sandbox
 * replaces, so the built adapter runs in a child Node process (`npm test` builds first).
 */
const ADAPTER = join(__dirname, '..', 'dist', 'search', 'cross-encoder.reranker.js');

function inNode(modelDir: string, model: string, query: string, passages: string[]): unknown {
  const script = `
    const { CrossEncoderReranker } = require(${JSON.stringify(ADAPTER)});
    (async () => {
      const reranker = await CrossEncoderReranker.loadIfPresent(
        { modelDir: ${JSON.stringify(modelDir)}, model: ${JSON.stringify(model)}, batchSize: 2 });
      if (!reranker) return process.stdout.write(JSON.stringify({ absent: true }));
      const scores = await reranker.score(${JSON.stringify(query)}, ${JSON.stringify(passages)});
      await reranker.close();
      process.stdout.write(JSON.stringify({ model: reranker.model, scores }));
    })().catch((e) => { console.error(e); process.exit(1); });
  `;
  const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as unknown;
}

jest.setTimeout(60_000);

/**
 * The real adapter (transformers.js tokenizer and sequence-classification model on onnxruntime)
 * on a FAKE cross-encoder: fixtures/fake-cross-encoder.onnx has a BERT classifier's inputs and
 * output but scores the passage segment as a bag of words (2 per "lighthouse", 1 per "keeper";
 * see fixtures/make-fake-cross-encoder.py). It checks pairing, segments, padding and batching,
 * not relevance: no real cross-encoder can be fetched here. The tokenizer is the embedding
 * model's, which `npm test` fetches.
 */
describe('CrossEncoderReranker', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kb-reranker-'));
  const tokenizerDir = join(process.env['EMBEDDING_MODEL_DIR']!, 'all-MiniLM-L6-v2');

  beforeAll(() => {
    const folder = join(dir, 'fake-cross-encoder');
    mkdirSync(join(folder, 'onnx'), { recursive: true });
    for (const file of ['tokenizer.json', 'tokenizer_config.json']) {
      copyFileSync(join(tokenizerDir, file), join(folder, file));
    }
    copyFileSync(
      join(__dirname, 'fixtures', 'fake-cross-encoder.onnx'),
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
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('scores each (query, passage) pair on the passage segment, across batches', () => {
    const passages = [
      'The harbour has a long pier.',
      'A lighthouse keeper lived beside the lighthouse.',
      'The keeper of the bees.',
      'lighthouse',
      '',
    ];
    // The query's own "lighthouse" and "keeper" (segment 0) never count.
    expect(inNode(dir, 'fake-cross-encoder', 'who was the lighthouse keeper?', passages)).toEqual({
      model: 'fake-cross-encoder',
      scores: [0, 5, 1, 2, 0],
    });
  });

  it('is absent, not an error, when the model folder is missing', () => {
    expect(inNode(dir, 'missing', 'q', ['p'])).toEqual({ absent: true });
  });
});
