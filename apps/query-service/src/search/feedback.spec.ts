import { rm3Expansion } from './feedback';

const vector = (terms: Record<string, number>) => ({
  length: Object.values(terms).reduce((a, b) => a + b, 0),
  terms: new Map(Object.entries(terms)),
});

describe('rm3Expansion', () => {
  it('adds the most probable terms of the best hits, weighted 1 − λ, the query keeping λ', () => {
    const expansion = rm3Expansion(
      [
        { score: 1, terms: vector({ librari: 2, catalog: 2 }) },
        // The lowest score: shifted to (almost) no share of the relevance model.
        { score: 0.5, terms: vector({ weather: 1 }) },
      ],
      { terms: 2, queryWeight: 0.7 },
    );
    expect(expansion?.queryWeight).toBe(0.7);
    expect(expansion?.terms.map((t) => t.lexeme)).toEqual(['catalog', 'librari']);
    for (const term of expansion!.terms) expect(term.weight).toBeCloseTo(0.15, 5);
  });

  it('weights each hit by its share of the scores and each term by its frequency in the hit', () => {
    // Shifted scores 2, 1, ~0 → shares 2/3, 1/3, ~0; P(w|d) = tf / length.
    const expansion = rm3Expansion(
      [
        { score: 3, terms: vector({ a: 1, b: 3 }) },
        { score: 2, terms: vector({ a: 1 }) },
        { score: 1, terms: vector({ c: 5 }) },
      ],
      { terms: 3, queryWeight: 0.5 },
    )!;
    const p = { a: (2 / 3) * 0.25 + 1 / 3, b: (2 / 3) * 0.75 };
    const mass = p.a + p.b; // c's share is ~0 but it is still among the 3 most probable
    const weights = new Map(expansion.terms.map((t) => [t.lexeme, t.weight]));
    expect([...weights.keys()]).toEqual(['a', 'b', 'c']);
    expect(weights.get('a')).toBeCloseTo((0.5 * p.a) / mass, 5);
    expect(weights.get('b')).toBeCloseTo((0.5 * p.b) / mass, 5);
    expect(weights.get('c')).toBeLessThan(1e-5);
    const total = expansion.terms.reduce((sum, t) => sum + t.weight, 0);
    expect(total).toBeCloseTo(0.5, 10);
  });

  it('gives no expansion without hits or terms', () => {
    expect(rm3Expansion([])).toBeUndefined();
    expect(rm3Expansion([{ score: 1, terms: { length: 0, terms: new Map() } }])).toBeUndefined();
  });
});
