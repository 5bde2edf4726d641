import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FAKE_CROSS_ENCODER, installFakeCrossEncoder } from './support/fake-cross-encoder';

/**
 * onnxruntime checks tensor types against the native realm's Float32Array, which Jest's sandbox
 * replaces, so the built adapter runs in a child Node process (`npm test` builds first).
 */
const ADAPTER = join(__dirname, '..', 'dist', 'search', 'cross-encoder.reranker.js');

function inNode(modelDir: string, model: string, query: string, passages: string[]): unknown {
  const script = `
    const { CrossEncoderReranker } = require(${JSON.stringify(ADAPTER)});
    (async () => {
      const reranker = await CrossEncoderReranker.load(
        { modelDir: ${JSON.stringify(modelDir)}, model: ${JSON.stringify(model)}, batchSize: 2 });
      const scores = await reranker.score(${JSON.stringify(query)}, ${JSON.stringify(passages)});
      await reranker.close();
      process.stdout.write(JSON.stringify({ model: reranker.model, scores }));
    })().catch((e) => {
      process.stdout.write(JSON.stringify({ error: e.name, message: e.message }));
    });
  `;
  const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as unknown;
}

jest.setTimeout(60_000);

/**
 * The real adapter (transformers.js tokenizer and sequence-classification model on onnxruntime)
 * on a FAKE cross-encoder (support/fake-cross-encoder.ts). It checks pairing, segments, padding
 * and batching, not relevance: no real cross-encoder can be fetched here.
 */
describe('CrossEncoderReranker', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kb-reranker-'));

  beforeAll(() => installFakeCrossEncoder(dir));
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
    expect(inNode(dir, FAKE_CROSS_ENCODER, 'who was the lighthouse keeper?', passages)).toEqual({
      model: FAKE_CROSS_ENCODER,
      scores: [0, 5, 1, 2, 0],
    });
  });

  it('fails to load, naming the folder, when the model folder is missing', () => {
    expect(inNode(dir, 'missing', 'q', ['p'])).toEqual({
      error: 'CrossEncoderLoadError',
      message: expect.stringContaining(`${join(dir, 'missing')} holds no model`),
    });
  });

  it('fails to load, with the cause, when the model is broken', () => {
    const broken = mkdtempSync(join(tmpdir(), 'kb-reranker-broken-'));
    try {
      installFakeCrossEncoder(broken);
      rmSync(join(broken, FAKE_CROSS_ENCODER, 'onnx'), { recursive: true });
      expect(inNode(broken, FAKE_CROSS_ENCODER, 'q', ['p'])).toEqual({
        error: 'CrossEncoderLoadError',
        message: expect.stringMatching(/^RERANKER_MODEL=fake-cross-encoder in .* failed to load: /),
      });
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  });
});
