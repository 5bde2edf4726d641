import { checkIndexes, type DocumentState, type IndexRow } from './index-check';

const doc = (id: string, chunkCount: number, status = 'indexed', version = 2): DocumentState => ({
  id,
  status,
  version,
  chunkCount,
});
const row = (document_id: string, chunk_index: number, document_version = 2): IndexRow => ({
  document_id,
  document_version,
  chunk_index,
});

describe('the chaos run’s index check', () => {
  it('passes an index that holds each chunk of each indexed version once', () => {
    const states = new Map([['a', doc('a', 2)]]);
    expect(checkIndexes([[row('a', 0), row('a', 1)]], states)).toEqual({
      mismatched: 0,
      orphans: 0,
      duplicated: 0,
    });
  });

  it('counts duplicates, rows of another version or document, and short indexes', () => {
    const states = new Map([
      ['a', doc('a', 2)],
      ['b', doc('b', 1)],
      ['f', doc('f', 0, 'failed')],
    ]);
    const vectors = [
      row('a', 0),
      row('a', 0),
      row('a', 1),
      row('b', 0, 1),
      row('f', 0),
      row('x', 0),
    ];
    const lexical = [row('a', 0), row('a', 1), row('b', 0)];
    expect(checkIndexes([vectors, lexical], states)).toEqual({
      // b has no row of its version in the vector index; a has three rows for two chunks.
      mismatched: 2,
      orphans: 3,
      duplicated: 1,
    });
  });
});
