import { createHash } from 'node:crypto';

import type { EmbeddingProvider } from './embedding-provider';

/**
 * FAKE, FOR TESTS ONLY. A deterministic bag-of-words hashing embedder: texts sharing words get
 * similar vectors, so ranking logic can be tested without loading a model. It is not a real model;
 * a service serves it only when EMBEDDING_EXTRA_MODELS names it (the e2e suite's second model).
 */
export class TestEmbeddingProvider implements EmbeddingProvider {
  readonly model: string;

  constructor(readonly dimension = 64) {
    this.model = `test-hashing-${dimension}`;
  }

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map((text) => this.embedOne(text));
  }

  private embedOne(text: string): number[] {
    const vector = new Array<number>(this.dimension).fill(0);
    for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      const digest = createHash('sha256').update(word).digest();
      const slot = digest.readUInt32BE(0) % this.dimension;
      vector[slot] = (vector[slot] ?? 0) + (digest[4]! & 1 ? 1 : -1);
    }
    const norm = Math.hypot(...vector) || 1;
    return vector.map((v) => v / norm);
  }
}
