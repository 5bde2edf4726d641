import { referenceBatches } from './reference';

describe('referenceBatches', () => {
  // One token a character, so the lengths read plainly.
  const tokens = (text: string) => text.length;

  it('sorts by length and keeps each batch within the count and the padded-token budget', () => {
    const texts = [
      'x'.repeat(300),
      'a'.repeat(10),
      'b'.repeat(40),
      'c'.repeat(10),
      'd'.repeat(200),
    ];
    expect(
      referenceBatches(texts, tokens, { maxBatch: 3, maxBatchTokens: 320 }).map((batch) =>
        batch.map((text) => text.length),
      ),
    ).toEqual([
      // Three padded to 40: 120 tokens.
      [10, 10, 40],
      // Joining the first would make four (over maxBatch); 200 and 300 together would pad to 600.
      [200],
      [300],
    ]);
  });

  it('runs a text longer than the budget alone rather than dropping it', () => {
    const batches = referenceBatches(['y'.repeat(500), 'z'], tokens, {
      maxBatch: 32,
      maxBatchTokens: 100,
    });
    expect(batches).toEqual([['z'], ['y'.repeat(500)]]);
  });

  it('fills batches of short texts up to maxBatch', () => {
    const texts = Array.from({ length: 10 }, (_, i) => String(i).repeat(5));
    const batches = referenceBatches(texts, tokens, { maxBatch: 4, maxBatchTokens: 320 });
    expect(batches.map((batch) => batch.length)).toEqual([4, 4, 2]);
  });
});
