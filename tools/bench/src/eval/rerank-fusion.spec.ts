import { fuseRerank, orderByScores } from './rerank-fusion';

describe('fuseRerank', () => {
  const first = ['a', 'b', 'c', 'd', 'e'];

  it('keeps the first stage order at weight 0 and takes the cross-encoder order at weight 1', () => {
    const cross = ['c', 'a', 'b'];
    expect(fuseRerank(first, cross, { k: 60, weight: 0, depth: 3 })).toEqual(first);
    expect(fuseRerank(first, cross, { k: 60, weight: 1, depth: 3 })).toEqual([
      'c',
      'a',
      'b',
      'd',
      'e',
    ]);
  });

  it('reorders only the top depth and leaves the rest in place', () => {
    const fused = fuseRerank(first, ['b', 'a'], { k: 60, weight: 0.7, depth: 2 });
    expect(fused).toEqual(['b', 'a', 'c', 'd', 'e']);
  });

  it('breaks a tie between the two lists in favour of the first stage', () => {
    // a: ranks 1 and 2; b: ranks 2 and 1 → equal fused scores at weight 0.5.
    expect(fuseRerank(['a', 'b'], ['b', 'a'], { k: 10, weight: 0.5, depth: 2 })).toEqual([
      'a',
      'b',
    ]);
  });

  it('lets a weight above one half put the second list first', () => {
    const fused = fuseRerank(first, ['c', 'b', 'a', 'd', 'e'], { k: 10, weight: 0.6, depth: 5 });
    expect(fused[0]).toBe('c');
  });
});

describe('orderByScores', () => {
  it('sorts by score, best first, ties in input order', () => {
    expect(orderByScores(['a', 'b', 'c'], [0.1, 2, 0.1])).toEqual(['b', 'a', 'c']);
  });
});
