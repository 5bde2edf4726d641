import type { EmbeddingProvider } from '@kb/embeddings';

import { BiEncoderScorer } from './bi-encoder';

/** Unit vectors by text; queries arrive with the model's query prefix, passages with none. */
class TableProvider implements EmbeddingProvider {
  readonly model = 'table';
  readonly dimension = 2;
  readonly calls: string[][] = [];
  closed = false;

  constructor(private readonly vectors: Record<string, number[]>) {}

  async embed(texts: string[]): Promise<number[][]> {
    this.calls.push(texts);
    return texts.map((text) => this.vectors[text] ?? [0, 0]);
  }

  async embedQueries(texts: string[]): Promise<number[][]> {
    return this.embed(texts.map((text) => `query: ${text}`));
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

describe('BiEncoderScorer', () => {
  const provider = (): TableProvider =>
    new TableProvider({
      'query: cats': [1, 0],
      'query: dogs': [0, 1],
      'about cats': [1, 0],
      'about dogs': [0, 1],
      both: [Math.SQRT1_2, Math.SQRT1_2],
    });

  it('scores each passage by its cosine with the query embedded as a query', async () => {
    const model = provider();
    const scorer = new BiEncoderScorer(model);
    const scores = await scorer.score('cats', ['about dogs', 'both', 'about cats']);
    expect(scores[0]).toBeCloseTo(0);
    expect(scores[1]).toBeCloseTo(Math.SQRT1_2);
    expect(scores[2]).toBeCloseTo(1);
    expect(model.calls[0]).toEqual(['query: cats']);
  });

  it('embeds a query once for consecutive slices and again when the query changes', async () => {
    const model = provider();
    const scorer = new BiEncoderScorer(model);
    await scorer.score('cats', ['about cats']);
    await scorer.score('cats', ['about dogs']);
    expect(await scorer.score('dogs', ['about dogs'])).toEqual([1]);
    expect(model.calls).toEqual([
      ['query: cats'],
      ['about cats'],
      ['about dogs'],
      ['query: dogs'],
      ['about dogs'],
    ]);
  });

  it('scores no passages without running the model and closes the provider', async () => {
    const model = provider();
    const scorer = new BiEncoderScorer(model);
    expect(await scorer.score('cats', [])).toEqual([]);
    expect(model.calls).toEqual([]);
    await scorer.close();
    expect(model.closed).toBe(true);
  });
});
