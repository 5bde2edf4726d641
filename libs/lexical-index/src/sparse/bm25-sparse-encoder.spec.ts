import murmurhash from 'murmurhash';

import { BM25_B, BM25_K1 } from '../bm25-search.sql';
import { Bm25SparseEncoder, SPARSE_DIMENSIONS } from './bm25-sparse-encoder';
import { referenceEncoder } from './reference';
import { IdfTable } from './reference-statistics';

const table = new IdfTable({ '0.5': 'the of', '2.3': 'librari', '7.1': 'dewey' }, 9, 40);
const encoder = new Bm25SparseEncoder(table);

/** The sparse dot product: what Pinecone and pgvector's `<#>` compute. */
function dot(
  a: { indices: number[]; values: number[] },
  b: { indices: number[]; values: number[] },
) {
  const at = new Map(a.indices.map((index, i) => [index, a.values[i]!]));
  return b.indices.reduce((sum, index, i) => sum + (at.get(index) ?? 0) * b.values[i]!, 0);
}

describe('Bm25SparseEncoder', () => {
  it('places a lexeme by MurmurHash3 (x86, 32-bit, seed 0) of its UTF-8 bytes, below 10⁹', () => {
    // The reference implementation's published values.
    expect(encoder.indexOf('hello')).toBe(0x248bfa47 % SPARSE_DIMENSIONS);
    expect(encoder.indexOf('The quick brown fox jumps over the lazy dog')).toBe(0x2e4ff723);
    expect(encoder.indexOf('')).toBe(0);
    // UTF-8, as Postgres stores lexemes: 'é' is two bytes.
    expect(encoder.indexOf('café')).toBe(
      murmurhash.v3(new TextEncoder().encode('café')) % SPARSE_DIMENSIONS,
    );
    expect(encoder.indexOf('café')).not.toBe(encoder.indexOf('cafe'));
    for (const lexeme of ['dewey', 'librari', 'café', 'ünïcödé', 'x'.repeat(300)]) {
      const index = encoder.indexOf(lexeme);
      expect(Number.isInteger(index) && index >= 0 && index < 1e9).toBe(true);
      expect(index).toBe(new Bm25SparseEncoder(table).indexOf(lexeme));
    }
  });

  it("gives a chunk each lexeme's saturated, length-normalised count against the reference length", () => {
    const chunk = {
      length: 80,
      terms: new Map([
        ['dewey', 3],
        ['librari', 1],
      ]),
    };
    const side = encoder.document(chunk);
    const norm = BM25_K1 * (1 - BM25_B + (BM25_B * 80) / 40);
    const at = new Map(side.indices.map((index, i) => [index, side.values[i]!]));
    expect(at.get(encoder.indexOf('dewey'))).toBeCloseTo((3 * (BM25_K1 + 1)) / (3 + norm), 12);
    expect(at.get(encoder.indexOf('librari'))).toBeCloseTo((1 * (BM25_K1 + 1)) / (1 + norm), 12);
    // Ascending, distinct indices; each value below the saturation k1 + 1.
    expect(side.indices).toEqual([...side.indices].sort((x, y) => x - y));
    expect(side.values.every((v) => v > 0 && v < BM25_K1 + 1)).toBe(true);
    // A longer chunk with the same count weighs less.
    const longer = encoder.document({ length: 400, terms: new Map([['dewey', 3]]) });
    expect(longer.values[0]).toBeLessThan(at.get(encoder.indexOf('dewey'))!);
  });

  it("gives a query each lexeme's weight times its reference idf, the table's unknown idf for words it lacks", () => {
    const side = encoder.query(
      new Map([
        ['dewey', 1],
        ['the', 0.5],
        ['zyzzyva', 2],
        ['nothing', 0],
      ]),
    );
    const at = new Map(side.indices.map((index, i) => [index, side.values[i]!]));
    expect(at.get(encoder.indexOf('dewey'))).toBe(7.1);
    expect(at.get(encoder.indexOf('the'))).toBe(0.25);
    expect(at.get(encoder.indexOf('zyzzyva'))).toBe(18);
    expect(at.has(encoder.indexOf('nothing'))).toBe(false);
    expect(side.indices).toEqual([...side.indices].sort((x, y) => x - y));
  });

  it('scores a chunk for a query by the dot product of the two sides: BM25 with the reference statistics', () => {
    const chunk = {
      length: 25,
      terms: new Map([
        ['dewey', 2],
        ['the', 4],
        ['of', 1],
      ]),
    };
    const weights = new Map([
      ['dewey', 1],
      ['librari', 1],
      ['the', 1],
    ]);
    const share = (tf: number) =>
      (tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * 25) / 40));
    expect(dot(encoder.query(weights), encoder.document(chunk))).toBeCloseTo(
      7.1 * share(2) + 0.5 * share(4),
      12,
    );
  });

  it('adds the values of lexemes that share a place', () => {
    const shared = new Bm25SparseEncoder(table);
    jest.spyOn(shared, 'indexOf').mockReturnValue(7);
    expect(
      shared.query(
        new Map([
          ['dewey', 1],
          ['the', 2],
        ]),
      ),
    ).toEqual({
      indices: [7],
      values: [8.1],
    });
  });

  it('serves the committed reference table', () => {
    const reference = referenceEncoder();
    expect(reference).toBe(referenceEncoder());
    expect(reference.reference.avgdl).toBe(64);
    // Common English lexemes weigh little, rare ones more, unseen ones the most.
    expect(reference.idf('use')).toBeLessThan(reference.idf('librari'));
    expect(reference.idf('librari')).toBeLessThan(reference.idf('dewey'));
    expect(reference.idf('dewey')).toBeLessThan(reference.idf('zqxjkv'));
    expect(reference.idf('zqxjkv')).toBe(11);
  });
});
