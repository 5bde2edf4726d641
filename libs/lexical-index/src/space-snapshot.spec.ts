import { parseFilter } from '@kb/contracts';

import { blendedIdf, postingList, PRIOR_CHUNKS } from './bm25-rank';
import type { SpaceChunk } from './lexical-index';
import { BM25_B, BM25_K1 } from './pg-lexical-index';
import { type PostingList, SpaceSnapshot } from './space-snapshot';
import { Bm25SparseEncoder } from './sparse/bm25-sparse-encoder';
import { IdfTable, type ReferenceStatistics } from './sparse/reference-statistics';

/** Deterministic noise (a linear congruential generator), so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

const SIZE = 2_000;
const VOCABULARY = 300;
const next = random(7);
const rows: SpaceChunk[] = Array.from({ length: SIZE }, (_, o) => ({
  documentId: `d${Math.floor(o / 3)}`,
  documentVersion: 1,
  chunkIndex: o % 3,
  length: 5 + Math.floor(next() * 80),
  startOffset: 0,
  endOffset: 1,
  principals: [['t:*'], ['u:ann'], ['g:crew', 'u:bob']][o % 3]!,
  knowledgeBaseIds: [o % 2 ? 'kb-odd' : 'kb-even'],
  tags: o % 5 ? [] : ['five'],
  uploadedAt: 0,
  metadata: {},
}));
/** Per lexeme, its chunks (ascending) and counts: common lexemes first, as in prose. */
const lists = new Map<string, PostingList>();
for (let t = 0; t < VOCABULARY; t++) {
  const ordinals: number[] = [];
  const tfs: number[] = [];
  for (let o = 0; o < SIZE; o++) {
    if (next() < 0.5 / (1 + t)) {
      ordinals.push(o);
      tfs.push(1 + Math.floor(next() * 4));
    }
  }
  lists.set(`w${t}`, postingList({ ordinals, tfs }));
}

/**
 * BM25 over every readable chunk, written plainly: the oracle `rank` must agree with. With
 * `fixed`, idf and avgdl come from it instead.
 */
function reference(
  weights: Map<string, number>,
  query: { principals?: string[]; knowledgeBaseIds?: string[]; tag?: string; topK: number },
  fixed?: ReferenceStatistics,
) {
  const readable = rows.map(
    (row) => !query.principals || row.principals.some((p) => query.principals!.includes(p)),
  );
  const n = readable.filter(Boolean).length;
  const avgdl =
    fixed?.avgdl ??
    Math.max(rows.reduce((sum, row, o) => sum + (readable[o] ? row.length : 0), 0) / n, 1);
  const scores = new Map<number, number>();
  for (const [lexeme, weight] of weights) {
    const list = lists.get(lexeme)!;
    const df = Array.from(list.ordinals).filter((o) => readable[o]).length;
    if (df === 0) continue;
    const idf = fixed ? fixed.idf(lexeme) : Math.log(1 + (n - df + 0.5) / (df + 0.5));
    list.ordinals.forEach((o, i) => {
      if (!readable[o]) return;
      const tf = list.tfs[i]!;
      const share =
        (weight * idf * (tf * (BM25_K1 + 1))) /
        (tf + BM25_K1 * (1 - BM25_B + (BM25_B * rows[o]!.length) / avgdl));
      scores.set(o, (scores.get(o) ?? 0) + share);
    });
  }
  return [...scores]
    .filter(
      ([o]) =>
        !query.knowledgeBaseIds || query.knowledgeBaseIds.includes(rows[o]!.knowledgeBaseIds[0]!),
    )
    .filter(([o]) => !query.tag || rows[o]!.tags.includes(query.tag))
    .sort(
      ([a, x], [b, y]) =>
        y - x ||
        (rows[a]!.documentId < rows[b]!.documentId
          ? -1
          : rows[a]!.documentId > rows[b]!.documentId
            ? 1
            : rows[a]!.chunkIndex - rows[b]!.chunkIndex),
    )
    .slice(0, query.topK)
    .map(([ordinal, score]) => ({ ordinal, score }));
}

const snapshot = new SpaceSnapshot(1, 1, rows);
const queries = Array.from({ length: 200 }, (_, q) => {
  const terms = 1 + Math.floor(next() * 25);
  const weights = new Map<string, number>();
  for (let i = 0; i < terms; i++)
    weights.set(`w${Math.floor(next() * VOCABULARY)}`, i < 3 ? 1 : next() / 10);
  return {
    weights,
    query: {
      principals: [undefined, ['t:*'], ['u:bob'], ['t:*', 'u:ann']][q % 4],
      knowledgeBaseIds: q % 3 === 0 ? ['kb-odd'] : undefined,
      tag: q % 7 === 0 ? 'five' : undefined,
      topK: [1, 10, 40, 5_000][q % 4]!,
    },
  };
});

describe('SpaceSnapshot.rank', () => {
  it.each(queries.map((q, i) => [i, q] as const))(
    'query %i: the same chunks, order and scores as plain BM25 over the readable chunks, search after search',
    (_i, { weights, query }) => {
      const { tag, ...rest } = query;
      const asked = { ...rest, ...(tag ? { filter: parseFilter({ tags: tag }) } : {}) };
      const expected = reference(weights, query);
      // Twice: the second search runs on the scratch arrays the first one used.
      for (let round = 0; round < 2; round++) {
        const ranked = snapshot.rank(weights, lists, asked);
        expect(ranked.map((hit) => hit.ordinal)).toEqual(expected.map((hit) => hit.ordinal));
        ranked.forEach((hit, i) => expect(hit.score).toBeCloseTo(expected[i]!.score, 9));
      }
    },
  );
});

describe('SpaceSnapshot.rank with reference statistics (LEXICAL_IDF=reference)', () => {
  // Lexemes by rank into idf buckets; w299 and above are unknown to the table.
  const buckets: Record<string, string> = {};
  for (let t = 0; t < VOCABULARY - 1; t++) {
    const idf = (1 + Math.log(1 + t)).toFixed(1);
    buckets[idf] = `${buckets[idf] ?? ''} w${t}`;
  }
  const table = new IdfTable(buckets, 9, 30);

  it.each(queries.slice(0, 100).map((q, i) => [i, q] as const))(
    'query %i: the same chunks, order and scores as BM25 with the fixed idf and mean length',
    (_i, { weights, query }) => {
      const { tag, ...rest } = query;
      const asked = { ...rest, ...(tag ? { filter: parseFilter({ tags: tag }) } : {}) };
      const expected = reference(weights, query, table);
      for (let round = 0; round < 2; round++) {
        const ranked = snapshot.rank(weights, lists, asked, { reference: table });
        expect(ranked.map((hit) => hit.ordinal)).toEqual(expected.map((hit) => hit.ordinal));
        ranked.forEach((hit, i) => expect(hit.score).toBeCloseTo(expected[i]!.score, 9));
      }
    },
  );

  it("scores a chunk as the dot product of the encoder's sparse vectors", () => {
    const encoder = new Bm25SparseEncoder(table);
    const weights = new Map([
      ['w3', 1],
      ['w40', 1],
      ['w299', 0.4],
    ]);
    for (const hit of snapshot.rank(weights, lists, { topK: 5 }, { reference: table })) {
      const terms = new Map<string, number>();
      for (const lexeme of weights.keys()) {
        const list = lists.get(lexeme)!;
        const at = list.ordinals.indexOf(hit.ordinal);
        if (at >= 0) terms.set(lexeme, list.tfs[at]!);
      }
      const doc = encoder.document({ length: rows[hit.ordinal]!.length, terms });
      const query = encoder.query(weights);
      const dot = query.indices.reduce((sum, index, i) => {
        const j = doc.indices.indexOf(index);
        return sum + (j >= 0 ? doc.values[j]! * query.values[i]! : 0);
      }, 0);
      expect(hit.score).toBeCloseTo(dot, 9);
    }
  });

  it("gives a reader the same scores whatever the chunks they cannot read contain (ADR 19's attack)", () => {
    const weights = new Map([
      ['w5', 1],
      ['w77', 1],
    ]);
    const asBob = { principals: ['u:bob'], topK: 20 };
    const before = snapshot.rank(weights, lists, asBob, { reference: table });
    // Every chunk Bob cannot read now holds w5 and w77, three times each.
    const unreadable = rows.flatMap((row, o) => (row.principals.includes('u:bob') ? [] : [o]));
    const flooded = new Map(lists);
    for (const lexeme of weights.keys()) {
      const list = lists.get(lexeme)!;
      const tfs = new Map(Array.from(list.ordinals, (o, i) => [o, list.tfs[i]!] as const));
      for (const o of unreadable) tfs.set(o, 3);
      flooded.set(lexeme, postingList({ ordinals: [...tfs.keys()], tfs: [...tfs.values()] }));
    }
    const after = new SpaceSnapshot(2, 2, rows).rank(weights, flooded, asBob, { reference: table });
    expect(after).toEqual(before);
    // With readable statistics too; the whole space's statistics (no ACL) do see them.
    const readable = (l: Map<string, PostingList>, q: { topK: number; principals?: string[] }) =>
      new SpaceSnapshot(3, 3, rows).rank(weights, l, q);
    expect(readable(flooded, asBob)).toEqual(readable(lists, asBob));
    expect(readable(flooded, { topK: 20 })).not.toEqual(readable(lists, { topK: 20 }));
  });
});

describe('SpaceSnapshot.rank with tenant-wide statistics (LEXICAL_IDF=tenant)', () => {
  const table = new IdfTable({ '2.0': 'w0 w1 w2', '5.0': 'w3 w4 w5 w6 w7 w8 w9' }, 8, 30);
  const everyone = rows.flatMap((row, o) => (row.principals.includes('t:*') ? [o] : []));
  const n = everyone.length;
  const share = n / (n + PRIOR_CHUNKS);
  const meanLength = everyone.reduce((sum, o) => sum + rows[o]!.length, 0) / n;
  const blended = (l: Map<string, PostingList>): ReferenceStatistics => ({
    avgdl: share * meanLength + (1 - share) * table.avgdl,
    idf: (lexeme) => {
      const df = Array.from(l.get(lexeme)!.ordinals).filter((o) => everyone.includes(o)).length;
      return blendedIdf(table.idf(lexeme), df, n);
    },
  });

  it('blends the idf over the chunks everyone may read with the reference, by their number', () => {
    expect(blendedIdf(5, 10, 0)).toBe(5);
    expect(blendedIdf(5, 0, PRIOR_CHUNKS)).toBeCloseTo(
      (Math.log(1 + (PRIOR_CHUNKS + 0.5) / 0.5) + 5) / 2,
      12,
    );
    expect(blendedIdf(5, 99, 1e9)).toBeCloseTo(Math.log(1 + (1e9 - 99 + 0.5) / 99.5), 4);
  });

  it.each(queries.slice(0, 60).map((q, i) => [i, q] as const))(
    'query %i: BM25 with the blended statistics for callers among everyone, the reference alone for others',
    (_i, { weights, query }) => {
      const { tag, ...rest } = query;
      const asked = { ...rest, ...(tag ? { filter: parseFilter({ tags: tag }) } : {}) };
      const amongEveryone = !query.principals || query.principals.includes('t:*');
      const expected = reference(weights, query, amongEveryone ? blended(lists) : table);
      const ranked = snapshot.rank(weights, lists, asked, { reference: table, tenantWide: true });
      expect(ranked.map((hit) => hit.ordinal)).toEqual(expected.map((hit) => hit.ordinal));
      ranked.forEach((hit, i) => expect(hit.score).toBeCloseTo(expected[i]!.score, 9));
    },
  );

  it('gives a member the same scores whatever the chunks not everyone may read contain', () => {
    const weights = new Map([
      ['w5', 1],
      ['w77', 1],
    ]);
    const member = { principals: ['u:ann', 't:*'], topK: 20 };
    const scoring = { reference: table, tenantWide: true };
    const before = new SpaceSnapshot(4, 4, rows).rank(weights, lists, member, scoring);
    const flooded = new Map(lists);
    for (const lexeme of weights.keys()) {
      const list = lists.get(lexeme)!;
      const tfs = new Map(Array.from(list.ordinals, (o, i) => [o, list.tfs[i]!] as const));
      rows.forEach((row, o) => {
        if (!row.principals.includes('t:*') && !row.principals.includes('u:ann')) tfs.set(o, 3);
      });
      flooded.set(lexeme, postingList({ ordinals: [...tfs.keys()], tfs: [...tfs.values()] }));
    }
    const after = new SpaceSnapshot(5, 5, rows).rank(weights, flooded, member, scoring);
    expect(after).toEqual(before);
  });
});
