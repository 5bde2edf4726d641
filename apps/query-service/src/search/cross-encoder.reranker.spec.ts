import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  crossEncoderFromConfig,
  CrossEncoderLoadError,
  crossEncoderStateOf,
  type Reranker,
} from './cross-encoder.reranker';

/** Loading a real model is the integration test's (test/cross-encoder.int-spec.ts). */
describe('crossEncoderFromConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kb-reranker-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is null when RERANKER_MODEL is unset', async () => {
    await expect(crossEncoderFromConfig({ EMBEDDING_MODEL_DIR: dir })).resolves.toBeNull();
  });

  it('is null when RERANKER_MODEL is none, even with no folder configured', async () => {
    await expect(crossEncoderFromConfig({ RERANKER_MODEL: 'none' })).resolves.toBeNull();
  });

  it('fails, naming the setting, when no folder is configured to hold the model', async () => {
    const loading = crossEncoderFromConfig({ RERANKER_MODEL: 'ms-marco-MiniLM-L-6-v2' });
    await expect(loading).rejects.toBeInstanceOf(CrossEncoderLoadError);
    await expect(loading).rejects.toThrow(
      /RERANKER_MODEL=ms-marco-MiniLM-L-6-v2 .*RERANKER_MODEL_DIR/,
    );
  });

  it('fails, naming the folder, when the model is not there', async () => {
    const loading = crossEncoderFromConfig({
      RERANKER_MODEL: 'ms-marco-MiniLM-L-6-v2',
      RERANKER_MODEL_DIR: dir,
    });
    await expect(loading).rejects.toBeInstanceOf(CrossEncoderLoadError);
    await expect(loading).rejects.toThrow(
      `${join(dir, 'ms-marco-MiniLM-L-6-v2')} holds no model (no config.json)`,
    );
  });
});

describe('crossEncoderStateOf', () => {
  it('tells whether a cross-encoder is configured and loaded, and which', () => {
    const reranker: Reranker = {
      model: 'm',
      msPerPair: 1,
      score: async () => [],
      close: async () => undefined,
    };
    expect(crossEncoderStateOf(reranker)).toEqual({ configured: true, loaded: true, model: 'm' });
    expect(crossEncoderStateOf(null)).toEqual({ configured: false, loaded: false, model: null });
  });
});
