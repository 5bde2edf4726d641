import { reciprocalRankFusion } from './fusion';

describe('reciprocalRankFusion', () => {
  const key = (s: string) => s;

  it('matches a hand-computed example (k = 60)', () => {
    // semantic: A B C   lexical: C A D
    const fused = reciprocalRankFusion(
      [
        { strategy: 'semantic', items: ['A', 'B', 'C'] },
        { strategy: 'lexical', items: ['C', 'A', 'D'] },
      ],
      key,
    );
    const expected = {
      A: 1 / 61 + 1 / 62, // 0.032522
      C: 1 / 63 + 1 / 61, // 0.032266
      B: 1 / 62, // 0.016129
      D: 1 / 63, // 0.015873
    };
    expect(fused.map((f) => f.item)).toEqual(['A', 'C', 'B', 'D']);
    for (const f of fused)
      expect(f.score).toBeCloseTo(expected[f.item as keyof typeof expected], 12);
    expect(fused.find((f) => f.item === 'A')!.strategies).toEqual(['semantic', 'lexical']);
    expect(fused.find((f) => f.item === 'D')!.strategies).toEqual(['lexical']);
  });

  it('keeps a single list in its order and breaks ties by first appearance', () => {
    expect(
      reciprocalRankFusion([{ strategy: 'lexical', items: ['x', 'y'] }], key).map((f) => f.item),
    ).toEqual(['x', 'y']);
    const tie = reciprocalRankFusion(
      [
        { strategy: 'semantic', items: ['p'] },
        { strategy: 'lexical', items: ['q'] },
      ],
      key,
    );
    expect(tie.map((f) => f.item)).toEqual(['p', 'q']);
  });

  it('returns nothing for empty lists', () => {
    expect(reciprocalRankFusion<string>([{ strategy: 'semantic', items: [] }], key)).toEqual([]);
  });
});
