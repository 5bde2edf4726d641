import { capSparse, MAX_SPARSE_NON_ZEROS } from './sparse-limits';

describe('capSparse', () => {
  it('passes a sparse vector within the limit through unchanged', () => {
    const sparse = { indices: [3, 7, 9], values: [0.5, 1.5, 0.25] };
    expect(capSparse(sparse)).toBe(sparse);
  });

  it('drops zero values, which score nothing', () => {
    expect(capSparse({ indices: [1, 2, 3], values: [0.5, 0, 2] })).toEqual({
      indices: [1, 3],
      values: [0.5, 2],
    });
  });

  it('keeps the 1,000 largest values, in ascending index order', () => {
    const n = MAX_SPARSE_NON_ZEROS + 5;
    // Index i holds value i, so the five smallest (0..4) go.
    const sparse = {
      indices: Array.from({ length: n }, (_, i) => i * 2),
      values: Array.from({ length: n }, (_, i) => i + 1),
    };
    const capped = capSparse(sparse);
    expect(capped.indices).toHaveLength(MAX_SPARSE_NON_ZEROS);
    expect(capped.indices[0]).toBe(10);
    expect(capped.values[0]).toBe(6);
    expect([...capped.indices].sort((a, b) => a - b)).toEqual(capped.indices);
    expect(capped.indices.at(-1)).toBe((n - 1) * 2);
  });
});
