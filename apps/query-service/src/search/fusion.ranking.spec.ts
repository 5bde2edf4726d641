import {
  adaptiveCombination,
  adaptiveSemanticWeight,
  convexCombination,
  reciprocalRankFusion,
  standout,
} from './fusion.ranking';

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

  it('weighs each strategy by its own weight (k = 10, semantic 0.7, lexical 0.3)', () => {
    // semantic: A B   lexical: B C
    const fused = reciprocalRankFusion(
      [
        { strategy: 'semantic', items: ['A', 'B'] },
        { strategy: 'lexical', items: ['B', 'C'] },
      ],
      key,
      10,
      { semantic: 0.7, lexical: 0.3 },
    );
    const expected = { B: 0.7 / 12 + 0.3 / 11, A: 0.7 / 11, C: 0.3 / 12 };
    expect(fused.map((f) => f.item)).toEqual(['B', 'A', 'C']);
    for (const f of fused)
      expect(f.score).toBeCloseTo(expected[f.item as keyof typeof expected], 12);
    // Lexical weighted up, its first item leads.
    const lexicalFirst = reciprocalRankFusion(
      [
        { strategy: 'semantic', items: ['A', 'C'] },
        { strategy: 'lexical', items: ['C', 'A'] },
      ],
      key,
      10,
      { semantic: 0.3, lexical: 0.7 },
    );
    expect(lexicalFirst.map((f) => f.item)).toEqual(['C', 'A']);
  });

  it('returns nothing for empty lists', () => {
    expect(reciprocalRankFusion<string>([{ strategy: 'semantic', items: [] }], key)).toEqual([]);
  });
});

describe('convexCombination', () => {
  const item = (id: string, score: number) => ({ id, score });
  const key = (i: { id: string }) => i.id;

  it('matches a hand-computed example (α = 0.5)', () => {
    // semantic A .9 B .7 C .5 → 1, .5, 0;  lexical C 12 D 6 A 3 → 1, 1/3, 0
    const fused = convexCombination(
      [
        { strategy: 'semantic', items: [item('A', 0.9), item('B', 0.7), item('C', 0.5)] },
        { strategy: 'lexical', items: [item('C', 12), item('D', 6), item('A', 3)] },
      ],
      key,
    );
    expect(fused.map((f) => f.item.id)).toEqual(['A', 'C', 'B', 'D']);
    [0.5, 0.5, 0.25, 1 / 6].forEach((score, i) => expect(fused[i]!.score).toBeCloseTo(score, 12));
    expect(fused[1]!.strategies).toEqual(['semantic', 'lexical']);
  });

  it('weighs the strategies by α and scores a lone list by itself', () => {
    const lists = [
      { strategy: 'semantic' as const, items: [item('A', 1), item('B', 0)] },
      { strategy: 'lexical' as const, items: [item('B', 5), item('A', 1)] },
    ];
    expect(convexCombination(lists, key, 0.8).map((f) => f.item.id)).toEqual(['A', 'B']);
    expect(convexCombination(lists, key, 0.2).map((f) => f.item.id)).toEqual(['B', 'A']);
    expect(convexCombination([lists[1]!], key).map((f) => f.score)).toEqual([1, 0]);
  });
});

describe('standout', () => {
  it('is the z-score of the best score among all, 0 when nothing stands out', () => {
    expect(standout([])).toBe(0);
    expect(standout([5])).toBe(0);
    expect(standout([2, 2, 2])).toBe(0);
    // One outlier among n scores has z = √(n − 1).
    expect(standout([3, 1, 1, 1])).toBeCloseTo(Math.sqrt(3), 12);
    // 4 3 2 1: mean 2.5, σ √1.25.
    expect(standout([4, 3, 2, 1])).toBeCloseTo(1.5 / Math.sqrt(1.25), 12);
  });
});

describe('adaptiveSemanticWeight and adaptiveCombination', () => {
  const item = (id: string, score: number) => ({ id, score });
  const key = (i: { id: string }) => i.id;
  const semantic = {
    strategy: 'semantic' as const,
    items: [item('A', 4), item('B', 3), item('C', 2), item('D', 1)],
  };
  const lexical = {
    strategy: 'lexical' as const,
    items: [item('B', 3), item('A', 1), item('C', 1), item('D', 1)],
  };

  it('scales the prior by how far each list’s best stands out (hand-computed)', () => {
    const zs = 1.5 / Math.sqrt(1.25);
    const zl = Math.sqrt(3);
    expect(adaptiveSemanticWeight([semantic, lexical], 0.7)).toBeCloseTo(
      (0.7 * zs) / (0.7 * zs + 0.3 * zl),
      12,
    );
  });

  it('keeps the prior when a list is missing or flat', () => {
    expect(adaptiveSemanticWeight([semantic], 0.7)).toBe(0.7);
    const flat = { strategy: 'lexical' as const, items: [item('A', 2), item('B', 2)] };
    expect(adaptiveSemanticWeight([{ ...semantic, items: [item('A', 1)] }, flat], 0.6)).toBe(0.6);
    // Only the lexical list stands out: all the weight goes to it.
    expect(adaptiveSemanticWeight([{ ...semantic, items: [item('A', 1)] }, lexical], 0.6)).toBe(0);
  });

  it('is the convex combination with that α', () => {
    const alpha = adaptiveSemanticWeight([semantic, lexical], 0.7);
    expect(adaptiveCombination([semantic, lexical], key, 0.7)).toEqual(
      convexCombination([semantic, lexical], key, alpha),
    );
  });
});
