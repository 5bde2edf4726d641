import { maximalMarginalRelevance } from './mmr.ranking';

describe('maximalMarginalRelevance', () => {
  // a1 and a2 are near-duplicates; b is less relevant but different.
  const candidates = [
    { key: 'a1', relevance: 1.0, vector: [1, 0] },
    { key: 'a2', relevance: 0.9, vector: [0.99, 0.14] },
    { key: 'b', relevance: 0.5, vector: [0, 1] },
    { key: 'c', relevance: 0.0 },
  ];

  it('keeps the relevance order at lambda 1', () => {
    expect(maximalMarginalRelevance(candidates, 1, 4)).toEqual(['a1', 'a2', 'b', 'c']);
  });

  it('promotes a diverse candidate over a near-duplicate at lambda 0.5', () => {
    // After a1: a2 scores 0.5·0.9 − 0.5·0.99 < 0; b scores 0.5·0.5 − 0 = 0.25.
    expect(maximalMarginalRelevance(candidates, 0.5, 3)).toEqual(['a1', 'b', 'c']);
  });

  it('returns at most k keys, and all when k exceeds the candidates', () => {
    expect(maximalMarginalRelevance(candidates, 0.5, 1)).toEqual(['a1']);
    expect(maximalMarginalRelevance(candidates, 0.7, 10)).toHaveLength(4);
    expect(maximalMarginalRelevance([], 0.5, 3)).toEqual([]);
  });
});
