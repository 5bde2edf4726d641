import { postingList } from './bm25-rank';
import type { ChunkRef, LexemePostings, SpaceChunk, TermVector } from './lexical-index';
import { CarriedPostings, coldLists, HeldPostingLists } from './posting-lists';
import { SpaceSnapshot } from './space-snapshot';

const chunk = (
  documentId: string,
  chunkIndex: number,
  length = 10,
  endOffset = 100,
): SpaceChunk => ({
  documentId,
  documentVersion: 1,
  chunkIndex,
  length,
  startOffset: 0,
  endOffset,
  principals: ['t:*'],
  knowledgeBaseIds: [],
  tags: [],
  uploadedAt: 0,
  metadata: {},
});
const key = (row: ChunkRef) => `${row.documentId}#${row.documentVersion}#${row.chunkIndex}`;

/** Each chunk's postings, as Postgres would hold them: lexeme → count. */
type Postings = Map<string, Map<string, number>>;

/** `postingsOf` over these postings, chunks in key order as Postgres lists them. */
function postingsOf(postings: Postings, lexemes: string[]): LexemePostings[] {
  return lexemes.map((lexeme) => {
    const held = [...postings].filter(([, terms]) => terms.has(lexeme));
    held.sort(([a], [b]) => (a < b ? -1 : 1));
    return {
      lexeme,
      chunks: held.map(([k]) => k),
      tfs: held.map(([, terms]) => terms.get(lexeme)!),
    };
  });
}

const asArrays = (list: { ordinals: Int32Array; tfs: Int32Array; maxTf: number }) => ({
  ordinals: [...list.ordinals],
  tfs: [...list.tfs],
  maxTf: list.maxTf,
});

describe('coldLists', () => {
  it('makes lists in chunk order from postings in key order, skipping chunks it does not hold', () => {
    const rows = Array.from({ length: 33 }, (_, o) => chunk(`d${Math.floor(o / 3)}`, o % 3));
    const snapshot = new SpaceSnapshot(1, 1, rows);
    // Key order is not ordinal order here: d10 sorts before d2 as text.
    const read = [
      { lexeme: 'north', chunks: ['d10#1#0', 'd2#1#2', 'd2#1#1', 'gone#1#0'], tfs: [3, 1, 2, 9] },
    ];
    const lists = coldLists(snapshot, ['north', 'south'], read);
    expect(asArrays(lists.get('north')!)).toEqual({
      ordinals: [7, 8, 30],
      tfs: [2, 1, 3],
      maxTf: 3,
    });
    expect(lists.get('south')!.size).toBe(0);
    expect([...lists.keys()]).toEqual(['north', 'south']);
  });
});

describe('CarriedPostings', () => {
  // Before: a1 a2 b1 c1 c2 d1 (in key order). After: a1 kept, a2 removed, b1 rewritten (its
  // length changed), b2 and bb1 new, c1 kept, c2 rewritten (its offsets changed), d1 removed.
  const before = [
    chunk('a', 1),
    chunk('a', 2),
    chunk('b', 1),
    chunk('c', 1),
    chunk('c', 2),
    chunk('d', 1),
  ];
  const after = [
    chunk('a', 1),
    chunk('b', 1, 12),
    chunk('b', 2),
    chunk('bb', 1),
    chunk('c', 1),
    chunk('c', 2, 10, 90),
  ];
  const terms = (entries: Array<[string, number]>) => new Map(entries);
  const postingsBefore: Postings = new Map([
    [
      'a#1#1',
      terms([
        ['harbour', 2],
        ['crane', 1],
      ]),
    ],
    ['a#1#2', terms([['harbour', 1]])],
    ['b#1#1', terms([['crane', 4]])],
    [
      'c#1#1',
      terms([
        ['harbour', 3],
        ['ship', 1],
      ]),
    ],
    ['c#1#2', terms([['crane', 1]])],
    ['d#1#1', terms([['harbour', 5]])],
  ]);
  const postingsAfter: Postings = new Map([
    ['a#1#1', postingsBefore.get('a#1#1')!],
    [
      'b#1#1',
      terms([
        ['harbour', 1],
        ['crane', 2],
      ]),
    ],
    [
      'b#1#2',
      terms([
        ['crane', 7],
        ['quay', 1],
      ]),
    ],
    ['bb#1#1', terms([['harbour', 6]])],
    ['c#1#1', postingsBefore.get('c#1#1')!],
    ['c#1#2', postingsBefore.get('c#1#2')!],
  ]);
  const vectorsOf = (postings: Postings, asked: string[][]) => async (chunks: ChunkRef[]) => {
    asked.push(chunks.map(key));
    return new Map<string, TermVector>(
      chunks.map((c) => [key(c), { length: 10, terms: postings.get(key(c)) ?? new Map() }]),
    );
  };
  const lexemes = ['harbour', 'crane', 'ship', 'quay'];

  it('renumbers the last snapshot’s lists and merges in the new chunks’ postings: the lists a cold read would make', async () => {
    const last = new SpaceSnapshot(1, 1, before);
    const next = new SpaceSnapshot(2, 2, after);
    const asked: string[][] = [];
    const carried = await CarriedPostings.between(last, next, vectorsOf(postingsAfter, asked));
    // Only the chunks new or rewritten since are read.
    expect(asked).toEqual([['b#1#1', 'b#1#2', 'bb#1#1', 'c#1#2']]);
    expect(carried!.from).toBe(1);
    const held = coldLists(last, lexemes, postingsOf(postingsBefore, lexemes));
    const cold = coldLists(next, lexemes, postingsOf(postingsAfter, lexemes));
    for (const lexeme of lexemes) {
      expect([lexeme, asArrays(carried!.list(lexeme, held.get(lexeme)!))]).toEqual([
        lexeme,
        asArrays(cold.get(lexeme)!),
      ]);
    }
  });

  it('carries nothing past its limit of new chunks', async () => {
    const asked: string[][] = [];
    const last = new SpaceSnapshot(1, 1, before);
    const next = new SpaceSnapshot(2, 2, after);
    expect(await CarriedPostings.between(last, next, vectorsOf(postingsAfter, asked), 2)).toBe(
      undefined,
    );
    expect(asked).toEqual([]);
  });

  it('is sorted even when the snapshots list their chunks in different orders', async () => {
    const last = new SpaceSnapshot(1, 1, before);
    const next = new SpaceSnapshot(2, 2, [...after].reverse());
    const carried = await CarriedPostings.between(last, next, vectorsOf(postingsAfter, []));
    const held = coldLists(last, ['harbour'], postingsOf(postingsBefore, ['harbour']));
    const cold = coldLists(next, ['harbour'], postingsOf(postingsAfter, ['harbour']));
    expect(asArrays(carried!.list('harbour', held.get('harbour')!))).toEqual(
      asArrays(cold.get('harbour')!),
    );
  });
});

describe('HeldPostingLists', () => {
  const list = (size: number) =>
    postingList({ ordinals: Array.from({ length: size }, (_, o) => o), tfs: Array(size).fill(1) });
  const snapshot = new SpaceSnapshot(1, 1, [chunk('a', 1), chunk('a', 2), chunk('a', 3)]);

  it('holds lists per snapshot and evicts the least recently used past its postings', () => {
    const held = new HeldPostingLists(5);
    held.hold(
      snapshot,
      new Map([
        ['north', list(2)],
        ['south', list(2)],
      ]),
    );
    expect([...held.of(snapshot, ['north', 'east']).keys()]).toEqual(['north']);
    held.hold(snapshot, new Map([['west', list(3)]]));
    // 7 postings held: south, the least recently used, goes.
    expect([...held.of(snapshot, ['north', 'south', 'west']).keys()]).toEqual(['north', 'west']);
    expect(held.of(new SpaceSnapshot(2, 2, []), ['north']).size).toBe(0);
  });

  it('takes a list from the last snapshot once, under the next one', async () => {
    const held = new HeldPostingLists(100);
    held.hold(snapshot, new Map([['north', list(3)]]));
    const next = new SpaceSnapshot(2, 2, [chunk('a', 2), chunk('a', 3)]);
    held.carry(next, (await CarriedPostings.between(snapshot, next, async () => new Map()))!);
    expect(asArrays(held.of(next, ['north', 'south']).get('north')!)).toEqual({
      ordinals: [0, 1],
      tfs: [1, 1],
      maxTf: 1,
    });
    expect(held.of(snapshot, ['north']).size).toBe(0);
    expect(held.of(next, ['north']).get('north')!.size).toBe(2);
  });
});
