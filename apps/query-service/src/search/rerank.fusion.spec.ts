import { fuseRerankScores } from './rerank.fusion';

describe('fuseRerankScores', () => {
  it('weights the first stage rank and the model rank by reciprocal rank', () => {
    const fused = fuseRerankScores([0.1, 5, -2], { k: 10, weight: 0.25 });
    expect(fused[0]).toBeCloseTo(0.75 / 11 + 0.25 / 12);
    expect(fused[1]).toBeCloseTo(0.75 / 12 + 0.25 / 11);
    expect(fused[2]).toBeCloseTo(0.75 / 13 + 0.25 / 13);
  });

  it('is the first stage order at weight 0 and the model order at weight 1', () => {
    const scores = [0.1, 5, -2];
    const order = (fused: number[]) =>
      fused
        .map((s, i) => ({ s, i }))
        .sort((a, b) => b.s - a.s)
        .map((e) => e.i);
    expect(order(fuseRerankScores(scores, { k: 60, weight: 0 }))).toEqual([0, 1, 2]);
    expect(order(fuseRerankScores(scores, { k: 60, weight: 1 }))).toEqual([1, 0, 2]);
  });

  it('gives equal model scores the same model rank', () => {
    const fused = fuseRerankScores([1, 1], { k: 1, weight: 1 });
    expect(fused).toEqual([1 / 2, 1 / 2]);
  });
});
