import { toIndexSpace } from '@kb/contracts';

import { fakeIndexes, newHit } from '../../../test/support/search.fakes';
import type { SearchHit } from '../search.model';
import { NeighborsStep } from './neighbors.step';

const hit = (documentId: string, chunkIndex: number, score: number) =>
  newHit(chunkIndex, score, { documentId });
const inTenant = () => toIndexSpace('t1');
const shape = (hits: SearchHit[]) => hits.map((h) => [h.documentId, h.chunkIndex, h.isMatch]);

describe('NeighborsStep', () => {
  it('adds neighbours around each hit from the same document only, marked as not matching', async () => {
    const { lexical } = fakeIndexes();
    const result = await new NeighborsStep(lexical).run(
      [hit('d1', 0, 0.9), hit('d1', 3, 0.5)],
      1,
      inTenant,
    );
    expect(result.outcome).toBe('applied');
    expect(shape(result.hits)).toEqual([
      ['d1', 0, true],
      ['d1', 1, false],
      ['d1', 2, false],
      ['d1', 3, true],
    ]);
    expect(result.hits[1]!.score).toBe(0.9); // a neighbour carries its hit's score
    expect(result.hits[1]!.strategies).toEqual(['semantic']);
  });

  it('keeps each hit with its neighbours in document order, never repeating a chunk', async () => {
    const { lexical } = fakeIndexes();
    const result = await new NeighborsStep(lexical).run(
      [hit('d2', 2, 0.9), hit('d1', 1, 0.8), hit('d2', 1, 0.7)],
      1,
      inTenant,
    );
    // d2 #1 is a hit of its own: it comes at its own rank, not as d2 #2's neighbour.
    expect(shape(result.hits)).toEqual([
      ['d2', 2, true],
      ['d2', 3, false],
      ['d1', 0, false],
      ['d1', 1, true],
      ['d1', 2, false],
      ['d2', 0, false],
      ['d2', 1, true],
    ]);
  });

  it('reads each hit’s neighbours in the index space it came from', async () => {
    const { lexical, calls } = fakeIndexes();
    await new NeighborsStep(lexical).run([hit('d1', 0, 0.9), hit('d2', 0, 0.5)], 2, (h) =>
      toIndexSpace(h.documentId === 'd1' ? 't1' : 't1~abc'),
    );
    expect(calls.chunksAround.map((c) => [c.space, c.anchors.map((a) => a.documentId)])).toEqual([
      ['t1', ['d1']],
      ['t1~abc', ['d2']],
    ]);
  });

  it('is off for a radius of 0, and leaves the hits as they are when neighbours cannot be read', async () => {
    const hits = [hit('d1', 1, 0.9)];
    const { lexical, calls } = fakeIndexes();
    expect(await new NeighborsStep(lexical).run(hits, 0, inTenant)).toEqual({
      hits,
      outcome: 'off',
    });
    expect(calls.chunksAround).toHaveLength(0);
    const down = fakeIndexes({ down: { lexical: true } }).lexical;
    expect(await new NeighborsStep(down).run(hits, 1, inTenant)).toEqual({
      hits,
      outcome: { skipped: 'neighbors_unavailable' },
    });
  });
});
