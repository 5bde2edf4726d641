import { BatchingEmbeddingProvider, EmbeddingQueueFullError } from './batching-embedding-provider';
import type { EmbeddingProvider } from './embedding-provider';

/** A model that records each run's texts and answers when the test releases it. */
function gatedModel() {
  const runs: string[][] = [];
  const gates: Array<() => void> = [];
  const model: EmbeddingProvider = {
    model: 'gated',
    dimension: 1,
    embed: async (texts) => {
      runs.push(texts);
      await new Promise<void>((resolve) => gates.push(resolve));
      return texts.map((t) => [t.length]);
    },
  };
  const release = async () => {
    while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
    gates.shift()!();
  };
  return { model, runs, release };
}

describe('BatchingEmbeddingProvider', () => {
  it('runs the model once at a time, batching what arrives meanwhile by similar length', async () => {
    const { model, runs, release } = gatedModel();
    const batching = new BatchingEmbeddingProvider(model, { maxBatch: 2, maxQueue: 10 });
    const first = batching.embed(['aaaa']);
    const rest = [
      batching.embed(['bbbbbbbbbb']),
      batching.embed(['c']),
      batching.embed(['dd']),
      batching.embed(['eeeeeeeeee']),
    ];
    await release();
    expect(await first).toEqual([[4]]);
    // The oldest waiting ('bbbbbbbbbb') goes with the text nearest its length.
    await release();
    await release();
    expect(await Promise.all(rest)).toEqual([[[10]], [[1]], [[2]], [[10]]]);
    expect(runs).toEqual([['aaaa'], ['bbbbbbbbbb', 'eeeeeeeeee'], ['c', 'dd']]);
  });

  it('with parallelRuns keeps that many runs going, each taking the next batch as it frees', async () => {
    const { model, runs, release } = gatedModel();
    const batching = new BatchingEmbeddingProvider(model, {
      maxBatch: 2,
      maxQueue: 10,
      parallelRuns: 2,
    });
    const first = batching.embed(['a']);
    const second = batching.embed(['bb']);
    const later = batching.embed(['ccc', 'dddd']);
    await new Promise((resolve) => setImmediate(resolve));
    // Two runs at once (one text each: nothing else was waiting when each started), a third waits.
    expect(runs).toEqual([['a'], ['bb']]);
    await release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toEqual([['a'], ['bb'], ['ccc', 'dddd']]);
    await release();
    await release();
    expect(await Promise.all([first, second, later])).toEqual([[[1]], [[2]], [[3], [4]]]);
  });

  it('refuses texts beyond its queue bound at once, and passes model failures to every caller', async () => {
    const { model, release } = gatedModel();
    const batching = new BatchingEmbeddingProvider(model, { maxBatch: 4, maxQueue: 2 });
    const running = batching.embed(['a']);
    const queued = batching.embed(['b', 'c']);
    await expect(batching.embed(['d'])).rejects.toBeInstanceOf(EmbeddingQueueFullError);
    await release();
    await release();
    expect(await running).toEqual([[1]]);
    expect(await queued).toEqual([[1], [1]]);

    const failing = new BatchingEmbeddingProvider(
      { model: 'x', dimension: 1, embed: () => Promise.reject(new Error('model crashed')) },
      { maxBatch: 4, maxQueue: 4 },
    );
    await expect(Promise.all([failing.embed(['a']), failing.embed(['b'])])).rejects.toThrow(
      'model crashed',
    );
  });

  it('runs queries through the model\u2019s embedQueries, never in a run with passages', async () => {
    const runs: Array<{ kind: string; texts: string[] }> = [];
    const model: EmbeddingProvider = {
      model: 'prefixed',
      dimension: 1,
      embed: async (texts) => (runs.push({ kind: 'passage', texts }), texts.map(() => [0])),
      embedQueries: async (texts) => (runs.push({ kind: 'query', texts }), texts.map(() => [1])),
    };
    const batching = new BatchingEmbeddingProvider(model, { maxBatch: 8, maxQueue: 10 });
    const [passages, queries, more] = await Promise.all([
      batching.embed(['p1', 'p2']),
      batching.embedQueries(['q1']),
      batching.embed(['p3']),
    ]);
    expect(passages).toEqual([[0], [0]]);
    expect(queries).toEqual([[1]]);
    expect(more).toEqual([[0]]);
    expect(runs.filter((r) => r.kind === 'query')).toEqual([{ kind: 'query', texts: ['q1'] }]);
    expect(
      runs
        .filter((r) => r.kind === 'passage')
        .flatMap((r) => r.texts)
        .sort(),
    ).toEqual(['p1', 'p2', 'p3']);
  });

  it('keeps a run within maxBatchTokens: long texts run alone, short ones together', async () => {
    const { model, runs, release } = gatedModel();
    // Budget 60 estimated tokens (about 4 characters each): 200 characters are 50 tokens.
    const batching = new BatchingEmbeddingProvider(model, {
      maxBatch: 8,
      maxBatchTokens: 60,
      maxQueue: 20,
    });
    const long = (c: string) => c.repeat(200);
    const short = (c: string) => c.repeat(20); // 5 tokens: 10 of them would be 50, but maxBatch 8
    const first = batching.embed(['x']);
    const rest = [
      batching.embed([long('a'), long('b')]),
      batching.embed(Array.from({ length: 10 }, (_, i) => short(String(i)))),
    ];
    for (let i = 0; i < 5; i++) await release();
    await Promise.all([first, ...rest]);
    expect(runs.map((run) => run.map((text) => text.length))).toEqual([
      [1],
      // The oldest waiting long text runs alone: two would pad to 100 tokens.
      [200],
      [200],
      // Eight short ones (40 tokens) share a run; maxBatch caps it.
      [20, 20, 20, 20, 20, 20, 20, 20],
      [20, 20],
    ]);
  });

  it('fills a run with shorter texts when the oldest waiting is the longest', async () => {
    const { model, runs, release } = gatedModel();
    const batching = new BatchingEmbeddingProvider(model, {
      maxBatch: 8,
      maxBatchTokens: 60,
      maxQueue: 20,
    });
    const first = batching.embed(['x']);
    const rest = [batching.embed(['m'.repeat(76)]), batching.embed(['s'.repeat(8), 't'.repeat(8)])];
    for (let i = 0; i < 2; i++) await release();
    await Promise.all([first, ...rest]);
    // 76 characters are 19 tokens: three texts padded to it are 57, within 60.
    expect(runs.map((run) => run.map((text) => text.length))).toEqual([[1], [8, 8, 76]]);
  });
});
