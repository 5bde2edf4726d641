import { evaluate, mrrAt, ndcgAt, perModeLosers, recallAt } from './metrics';

const judged = new Map([
  ['a', 1],
  ['b', 1],
  ['c', 0],
]);

describe('retrieval metrics', () => {
  it('computes nDCG@k by hand', () => {
    // ranking: x a y b → DCG = 1/log2(3) + 1/log2(5); ideal = 1 + 1/log2(3)
    const expected = (1 / Math.log2(3) + 1 / Math.log2(5)) / (1 + 1 / Math.log2(3));
    expect(ndcgAt(10, ['x', 'a', 'y', 'b'], judged)).toBeCloseTo(expected, 12);
    expect(ndcgAt(10, ['a', 'b'], judged)).toBeCloseTo(1, 12);
    expect(ndcgAt(1, ['x', 'a'], judged)).toBe(0);
  });

  it('computes recall@k and MRR@k', () => {
    expect(recallAt(2, ['a', 'x', 'b'], judged)).toBe(0.5);
    expect(recallAt(100, ['c', 'b', 'a'], judged)).toBe(1);
    expect(mrrAt(10, ['x', 'y', 'b'], judged)).toBeCloseTo(1 / 3, 12);
    expect(mrrAt(2, ['x', 'y', 'b'], judged)).toBe(0);
  });

  it('averages over every judged query, counting a missing ranking as 0', () => {
    const qrels = new Map([
      ['q1', judged],
      ['q2', new Map([['z', 1]])],
    ]);
    const scores = evaluate(new Map([['q1', ['a', 'b']]]), qrels);
    expect(scores).toEqual({ 'ndcg@10': 0.5, 'recall@100': 0.5, 'mrr@10': 0.5 });
  });
});

describe('per-mode losers', () => {
  it('lists the queries a mode lost most nDCG@10 on, against the best other mode', () => {
    const qrels = new Map([
      ['q1', new Map([['a', 1]])],
      ['q2', new Map([['b', 1]])],
      ['q3', new Map([['c', 1]])],
    ]);
    const rankings = new Map([
      [
        'hybrid',
        new Map([
          ['q1', ['x', 'a']],
          ['q2', ['b']],
          ['q3', ['x', 'y', 'c']],
        ]),
      ],
      [
        'lexical',
        new Map([
          ['q1', ['a']],
          ['q2', ['x', 'b']],
          ['q3', ['c']],
        ]),
      ],
    ]);
    const losers = perModeLosers(rankings, qrels, 5);
    expect(losers.get('hybrid')?.map((l) => l.queryId)).toEqual(['q3', 'q1']);
    expect(losers.get('hybrid')?.[0]).toEqual({
      queryId: 'q3',
      'ndcg@10': 0.5,
      bestOther: 'lexical',
      'bestOther_ndcg@10': 1,
    });
    expect(losers.get('lexical')?.map((l) => l.queryId)).toEqual(['q2']);
    expect(perModeLosers(rankings, qrels, 1).get('hybrid')).toHaveLength(1);
  });
});
