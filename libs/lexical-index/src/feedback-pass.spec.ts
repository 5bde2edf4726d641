import { parseFilter } from '@kb/contracts';

import { FEEDBACK_CAP, ownWeight, postingList, queryWeights } from './bm25-rank';
import type { LexicalPassMemo, QueryExpansion, SpaceChunk } from './lexical-index';
import { type PostingList, type Scoring, SpaceSnapshot } from './space-snapshot';

/** Deterministic noise (a linear congruential generator), so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

/** A random space: chunk lengths, readers, knowledge bases and tags, and Zipf-like postings. */
function randomSpace(seed: number) {
  const next = random(seed);
  const size = 300 + Math.floor(next() * 1_200);
  const rows: SpaceChunk[] = Array.from({ length: size }, (_, o) => ({
    documentId: `d${Math.floor(o / 3)}`,
    documentVersion: 1,
    chunkIndex: o % 3,
    length: 3 + Math.floor(next() * 90),
    startOffset: 0,
    endOffset: 1,
    principals: [['t:*'], ['u:ann'], ['g:crew', 'u:bob']][Math.floor(next() * 3)]!,
    knowledgeBaseIds: [next() < 0.5 ? 'kb-a' : 'kb-b'],
    tags: next() < 0.2 ? ['five'] : [],
    uploadedAt: 0,
    metadata: {},
  }));
  const lists = new Map<string, PostingList>();
  for (let t = 0; t < 120; t++) {
    const density = 0.7 / (1 + t) ** 0.9;
    const ordinals: number[] = [];
    const tfs: number[] = [];
    for (let o = 0; o < size; o++) {
      if (next() < density) {
        ordinals.push(o);
        tfs.push(1 + Math.floor(next() ** 3 * 6));
      }
    }
    lists.set(`w${t}`, postingList({ ordinals, tfs }));
  }
  return { next, snapshot: new SpaceSnapshot(seed, 1, rows), lists };
}

/** A query's lexemes, and RM3's expansion of it: twenty terms, some of them its own. */
function randomQuery(next: () => number) {
  const pick = () => `w${Math.floor(next() ** 2 * 120)}`;
  const lexemes = Array.from({ length: 1 + Math.floor(next() * 8) }, pick);
  const terms = new Map<string, number>();
  for (let i = 0; i < 20; i++)
    terms.set(i < 3 && next() < 0.5 ? lexemes[i % lexemes.length]! : pick(), 0);
  const raw = [...terms.keys()].map(() => 0.01 + next());
  const mass = raw.reduce((sum, x) => sum + x, 0);
  const expansion: QueryExpansion = {
    queryWeight: 0.7,
    terms: [...terms.keys()].map((lexeme, i) => ({ lexeme, weight: (0.3 * raw[i]!) / mass })),
  };
  return { lexemes, expansion };
}

/** Both passes as SnapshotLexicalIndex runs them, the second from the first's scores or not. */
function bothPasses(
  snapshot: SpaceSnapshot,
  lists: Map<string, PostingList>,
  query: Parameters<SpaceSnapshot['rank']>[2],
  { lexemes, expansion }: ReturnType<typeof randomQuery>,
  memo: LexicalPassMemo | undefined,
  scoring: Scoring = {},
) {
  const first = queryWeights(lexemes, undefined);
  snapshot.rank(first.weights, lists, query, { ...scoring, reuse: memo && { memo } });
  const { weights, feedback } = queryWeights(lexemes, expansion);
  const added = new Map<string, number>();
  for (const term of expansion.terms) added.set(term.lexeme, term.weight);
  const reuse = memo && {
    memo,
    expansion: { ownWeight: ownWeight(lexemes, expansion), weights: added },
  };
  return snapshot.rank(weights, lists, query, { ...scoring, feedback, reuse });
}

describe("RM3's second pass from the first pass's scores", () => {
  it('ranks as the full re-rank does, over 300 random spaces and queries', () => {
    let reused = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const { next, snapshot, lists } = randomSpace(seed);
      const asked = randomQuery(next);
      const query = {
        principals: [undefined, ['t:*'], ['u:bob'], ['t:*', 'u:ann']][seed % 4],
        knowledgeBaseIds: seed % 3 === 0 ? ['kb-a'] : undefined,
        ...(seed % 11 === 0 ? { filter: parseFilter({ tags: 'five' }) } : {}),
        topK: [1, 10, 40, 100, 5_000][seed % 5]!,
      };
      const scoring: Scoring = seed % 2 ? { cap: FEEDBACK_CAP } : { cap: null };
      const expected = bothPasses(snapshot, lists, query, asked, undefined, scoring);
      const memo: LexicalPassMemo = {};
      const got = bothPasses(snapshot, lists, query, asked, memo, scoring);
      if (memo.reused) reused++;
      expect({ seed, chunks: got.map((hit) => hit.ordinal) }).toEqual({
        seed,
        chunks: expected.map((hit) => hit.ordinal),
      });
      const off = got.filter((hit, i) => Math.abs(hit.score - expected[i]!.score) > 1e-9);
      expect({ seed, off }).toEqual({ seed, off: [] });
    }
    // The second pass started from the first's scores, not only fell back to ranking in full.
    expect(reused).toBeGreaterThan(280);
  });

  it('ranks in full when the first pass searched for other readers or knowledge bases', () => {
    const { next, snapshot, lists } = randomSpace(5);
    const asked = randomQuery(next);
    const memo: LexicalPassMemo = {};
    const first = queryWeights(asked.lexemes, undefined);
    snapshot.rank(first.weights, lists, { principals: ['u:ann'], topK: 10 }, { reuse: { memo } });
    expect(memo.held).toBeDefined();
    const { weights, feedback } = queryWeights(asked.lexemes, asked.expansion);
    const reuse = {
      memo,
      expansion: {
        ownWeight: ownWeight(asked.lexemes, asked.expansion),
        weights: new Map(asked.expansion.terms.map((term) => [term.lexeme, term.weight])),
      },
    };
    const query = { principals: ['u:bob'], topK: 10 };
    const got = snapshot.rank(weights, lists, query, { feedback, reuse });
    expect(memo.reused).toBe(false);
    expect(got).toEqual(snapshot.rank(weights, lists, query, { feedback }));
    // Used once: the memo is emptied.
    expect(memo.held).toBeUndefined();
  });
});

describe('both passes by windows (docs/adr/0060)', () => {
  it("rank as list by list, RM3's pass from the k-th best of the first pass's top k, over 150 random spaces and queries", () => {
    let seeded = 0;
    let filteredSeeded = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const { next, snapshot, lists } = randomSpace(seed);
      const asked = randomQuery(next);
      const query = {
        principals: [undefined, ['t:*'], ['u:bob'], ['t:*', 'u:ann']][seed % 4],
        knowledgeBaseIds: seed % 3 === 0 ? ['kb-a'] : undefined,
        // A filter narrows the scope the windows prune within (scope-masks.ts): every search in
        // query-service carries one.
        ...(seed % 5 === 0 ? { filter: parseFilter({ tags: { $nin: ['five'] } }) } : {}),
        topK: [1, 10, 40, 100][seed % 4]!,
      };
      const cap: Scoring = seed % 2 ? { cap: FEEDBACK_CAP } : { cap: null };
      const expected = bothPasses(snapshot, lists, query, asked, {}, { ...cap, windows: false });
      const memo: LexicalPassMemo = {};
      const got = bothPasses(snapshot, lists, query, asked, memo, { ...cap, windows: true });
      // RM3's pass skips windows from the first against what the first pass's top k score under
      // the expanded query (docs/adr/0063); a one-term first pass is not windowed and keeps its
      // memo as before.
      if (memo.reused) seeded++;
      if (memo.reused && query.filter) filteredSeeded++;
      expect({ seed, chunks: got.map((hit) => hit.ordinal) }).toEqual({
        seed,
        chunks: expected.map((hit) => hit.ordinal),
      });
      const off = got.filter((hit, i) => Math.abs(hit.score - expected[i]!.score) > 1e-9);
      expect({ seed, off }).toEqual({ seed, off: [] });
    }
    expect(seeded).toBeGreaterThan(100);
    expect(filteredSeeded).toBeGreaterThan(20);
  });
});

describe("RM3's second pass when many chunks lack an own term's share", () => {
  it('adds that term to those chunks only, as the full re-rank scores them', () => {
    const next = random(99);
    const size = 6_000;
    const rows: SpaceChunk[] = Array.from({ length: size }, (_, o) => ({
      documentId: `d${o}`,
      documentVersion: 1,
      chunkIndex: 0,
      length: 5 + Math.floor(next() * 60),
      startOffset: 0,
      endOffset: 1,
      principals: ['t:*'],
      knowledgeBaseIds: ['kb'],
      tags: [],
      uploadedAt: 0,
      metadata: {},
    }));
    const list = (density: number, most: number) => {
      const ordinals: number[] = [];
      const tfs: number[] = [];
      for (let o = 0; o < size; o++) {
        if (next() < density) {
          ordinals.push(o);
          tfs.push(1 + Math.floor(next() * most));
        }
      }
      return postingList({ ordinals, tfs });
    };
    // Rarer own terms the first pass scans, a common one it only adds to the chunks it keeps, and
    // feedback terms common enough that the second pass keeps hundreds of chunks lacking the
    // common one: it is then scanned for them (marked 2), not looked up.
    const lists = new Map<string, PostingList>([
      ['rare1', list(0.1, 3)],
      ['rare2', list(0.15, 3)],
      ['common', list(0.97, 4)],
      ...Array.from({ length: 20 }, (_, i) => [`f${i}`, list(0.05 + i * 0.02, 3)] as const),
    ]);
    const snapshot = new SpaceSnapshot(1, 1, rows);
    const asked = {
      lexemes: ['rare1', 'rare2', 'common'],
      expansion: {
        queryWeight: 0.7,
        terms: Array.from({ length: 20 }, (_, i) => ({ lexeme: `f${i}`, weight: 0.3 / 20 })),
      },
    };
    for (const topK of [100, 200, 400, 600]) {
      const query = { topK };
      const expected = bothPasses(snapshot, lists, query, asked, undefined);
      const memo: LexicalPassMemo = {};
      const got = bothPasses(snapshot, lists, query, asked, memo);
      expect(memo.reused).toBe(true);
      expect(got.map((hit) => hit.ordinal)).toEqual(expected.map((hit) => hit.ordinal));
      const off = got.filter((hit, i) => Math.abs(hit.score - expected[i]!.score) > 1e-9);
      expect(off).toEqual([]);
    }
  });
});
