import type { SparseEncoder, SparseValues, TermVector } from '@kb/lexical-index';

const K1 = 0.9;
const B = 0.4;

/**
 * A small BM25 sparse encoder for the specs (the shipped one is `Bm25SparseEncoder`): FNV-1a
 * indices, a fixed mean length and one fixed idf for every lexeme, so nothing depends on which
 * chunks an index holds. Colliding lexemes share an index, their values summed.
 */
export class TestSparseEncoder implements SparseEncoder {
  constructor(
    private readonly avgdl = 12,
    private readonly idf: (lexeme: string) => number = () => 2,
  ) {}

  indexOf(lexeme: string): number {
    let hash = 0x811c9dc5;
    for (const byte of Buffer.from(lexeme, 'utf8')) {
      hash ^= byte;
      hash = Math.imul(hash, 0x01000193) >>> 0;
    }
    return hash;
  }

  document({ length, terms }: TermVector): SparseValues {
    const norm = K1 * (1 - B + (B * length) / this.avgdl);
    return this.sparse([...terms].map(([lexeme, tf]) => [lexeme, (tf * (K1 + 1)) / (tf + norm)]));
  }

  query(weights: ReadonlyMap<string, number>): SparseValues {
    return this.sparse([...weights].map(([lexeme, w]) => [lexeme, w * this.idf(lexeme)]));
  }

  private sparse(entries: Array<[string, number]>): SparseValues {
    const byIndex = new Map<number, number>();
    for (const [lexeme, value] of entries) {
      const index = this.indexOf(lexeme);
      byIndex.set(index, (byIndex.get(index) ?? 0) + value);
    }
    const indices = [...byIndex.keys()].sort((a, b) => a - b);
    return { indices, values: indices.map((i) => byIndex.get(i)!) };
  }
}
