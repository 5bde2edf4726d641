import { toIndexSpace } from '@kb/contracts';

import { fakeIndexes, newHit } from '../../../test/support/search.fakes';
import { DiversifyStep } from './diversify.step';

// 0 and 1 are near-duplicates; 2 is less relevant but different.
const stored = { 0: [1, 0], 1: [0.99, 0.14], 2: [0, 1] };
const hits = [newHit(0, 0.9), newHit(1, 0.85), newHit(2, 0.5)];
const mmr = (mmrLambda: number) => ({ mmr: true, mmrLambda });
const own = toIndexSpace('t1');
const chunksOf = (asked: Array<{ chunkIndex: number }>) => asked.map((c) => c.chunkIndex);

describe('DiversifyStep', () => {
  it('re-orders by MMR over the vectors stored in the space searched', async () => {
    const { vectors, calls } = fakeIndexes({ stored });
    const step = new DiversifyStep(vectors);
    const diverse = await step.run(hits, [own], mmr(0.5), 50);
    expect(diverse.outcome).toBe('applied');
    expect(diverse.hits.map((h) => h.chunkIndex)).toEqual([0, 2, 1]);
    const relevant = await step.run(hits, [own], mmr(1), 50);
    expect(relevant.hits.map((h) => h.chunkIndex)).toEqual([0, 1, 2]);
    expect(calls.fetchVectors[0]!.space).toBe('t1');
    expect(chunksOf(calls.fetchVectors[0]!.chunks)).toEqual([0, 1, 2]);
  });

  it('chooses among the best `pool` hits only; the rest keep their order after them', async () => {
    const { vectors, calls } = fakeIndexes({ stored: { ...stored, 3: [1, 0] } });
    const ranked = [newHit(0, 0.9), newHit(3, 0.85), newHit(2, 0.6), newHit(1, 0.5)];
    const { hits: diverse } = await new DiversifyStep(vectors).run(ranked, [own], mmr(0.5), 3);
    // 3 duplicates 0, so 2 moves up; 1 is beyond the pool and stays last.
    expect(diverse.map((h) => h.chunkIndex)).toEqual([0, 2, 3, 1]);
    expect(chunksOf(calls.fetchVectors[0]!.chunks)).toEqual([0, 3, 2]);
  });

  it('is off when not asked', async () => {
    const { vectors, calls } = fakeIndexes({ stored });
    const off = await new DiversifyStep(vectors).run(
      hits,
      [own],
      { mmr: false, mmrLambda: 0.5 },
      50,
    );
    expect(off).toEqual({ hits, outcome: 'off' });
    expect(calls.fetchVectors).toHaveLength(0);
  });

  it('keeps the order, and says why, across several vector spaces or without the vectors', async () => {
    const { vectors, calls } = fakeIndexes({ stored });
    expect(
      await new DiversifyStep(vectors).run(hits, [own, toIndexSpace('t1~abc')], mmr(0.5), 50),
    ).toEqual({
      hits,
      outcome: { skipped: 'several_vector_spaces' },
    });
    expect(calls.fetchVectors).toHaveLength(0);
    const down = fakeIndexes({ stored, down: { vector: true } }).vectors;
    expect(await new DiversifyStep(down).run(hits, [own], mmr(0.5), 50)).toEqual({
      hits,
      outcome: { skipped: 'vector_search_unavailable' },
    });
  });
});
