import { bestWindow } from './rerank.window';

const filler = (n: number, word = 'filler') => Array.from({ length: n }, () => word).join(' ');

describe('bestWindow', () => {
  it('keeps a passage that fits whole', () => {
    expect(bestWindow('a short passage about lighthouses', 'lighthouse keeper', 64)).toBe(
      'a short passage about lighthouses',
    );
  });

  it('cuts a long passage to the window holding the most distinct query terms', () => {
    const passage = `${filler(100)} the Lighthouse keeper, retired, ${filler(100)}`;
    const window = bestWindow(passage, 'who was the lighthouse keeper?', 64);
    expect(window).toContain('Lighthouse keeper,');
    // 64 tokens ≈ 49 words, less the query's 5 and the 3 special tokens.
    expect(window.split(' ')).toHaveLength(41);
  });

  it('counts a term once however often it repeats, so two terms beat one repeated', () => {
    const passage = `keeper keeper keeper keeper ${filler(80)} lighthouse keeper ${filler(80)}`;
    const window = bestWindow(passage, 'lighthouse keeper', 40);
    expect(window).toContain('lighthouse keeper');
  });

  it('takes the start when no window holds a query term', () => {
    const passage = `first ${filler(200)}`;
    expect(bestWindow(passage, 'unrelated', 40).startsWith('first ')).toBe(true);
  });
});
