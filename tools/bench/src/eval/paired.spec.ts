import { pairedDifference } from './paired';

describe('pairedDifference', () => {
  it('gives the mean gain and the standard error of the per-query differences', () => {
    const { mean, se } = pairedDifference([0.5, 0.5, 0.5, 0.5], [0.6, 0.4, 0.7, 0.5]);
    expect(mean).toBeCloseTo(0.05);
    // differences 0.1, -0.1, 0.2, 0: sample sd 0.1291, / √4
    expect(se).toBeCloseTo(0.0645, 3);
  });

  it('is zero for identical lists and for no queries', () => {
    expect(pairedDifference([0.3, 0.7], [0.3, 0.7])).toEqual({ mean: 0, se: 0 });
    expect(pairedDifference([], [])).toEqual({ mean: 0, se: 0 });
  });
});
