import { TestEmbeddingProvider } from '@kb/embeddings';

import { memoryCache } from '../../test/support/search.fakes';
import { QueryEmbedder } from './query.embedder';

const main = new TestEmbeddingProvider();
const second = new TestEmbeddingProvider(8);
const models = { main, mainName: 'all-MiniLM-L6-v2', extra: [second] };

describe('QueryEmbedder', () => {
  it('embeds a query once and reuses the cached embedding, whatever its spacing', async () => {
    const { cache, entries } = memoryCache();
    const provider = new TestEmbeddingProvider();
    const embed = jest.spyOn(provider, 'embed');
    const embedder = new QueryEmbedder({ ...models, main: provider }, cache);
    const first = await embedder.embed('sail  rigging', undefined);
    const again = await embedder.embed(' sail rigging ', undefined);
    expect(embed).toHaveBeenCalledTimes(1);
    expect(embed).toHaveBeenCalledWith(['sail rigging']);
    // Stored as float32: the cached copy is the first vector at that precision.
    expect(again).toEqual(Array.from(new Float32Array(first)));
    expect(
      [...entries.keys()].filter((k) => k.startsWith('kb:qemb:v1:test-hashing-64:')),
    ).toHaveLength(1);
  });

  it('takes an entry read ahead for its key instead of asking the cache again', async () => {
    const { cache } = memoryCache();
    const get = jest.spyOn(cache, 'get');
    const provider = new TestEmbeddingProvider();
    const embed = jest.spyOn(provider, 'embed');
    const embedder = new QueryEmbedder({ ...models, main: provider }, cache);
    const key = embedder.cacheKey(' sail  rigging', undefined)!;
    expect(key).toBe(embedder.cacheKey('sail rigging', 'all-MiniLM-L6-v2'));
    expect(key).not.toBe(embedder.cacheKey('sail rigging', second.model));
    // Read ahead and absent: the model runs, Redis is not asked.
    const vector = await embedder.embed('sail rigging', undefined, { key, value: undefined });
    expect(get).not.toHaveBeenCalled();
    expect(embed).toHaveBeenCalledTimes(1);
    // Read ahead and present: neither runs.
    const stored = Buffer.from(new Float32Array([1, 0.5]).buffer).toString('base64');
    expect(await embedder.embed('sail rigging', undefined, { key, value: stored })).toEqual([
      1, 0.5,
    ]);
    expect(get).not.toHaveBeenCalled();
    expect(embed).toHaveBeenCalledTimes(1);
    // Read ahead for another model's key: ignored, the cache is asked (and holds the first run).
    expect(
      await embedder.embed('sail rigging', undefined, { key: 'other', value: stored }),
    ).toEqual(Array.from(new Float32Array(vector)));
    expect(get).toHaveBeenCalledTimes(1);
    expect(embed).toHaveBeenCalledTimes(1);
  });

  it('has no cache key without a cache or for a model it does not serve', () => {
    expect(new QueryEmbedder(models, null).cacheKey('q', undefined)).toBeUndefined();
    expect(new QueryEmbedder(models, memoryCache().cache).cacheKey('q', 'nope')).toBeUndefined();
  });

  it('embeds every time without a cache', async () => {
    const provider = new TestEmbeddingProvider();
    const embed = jest.spyOn(provider, 'embed');
    const embedder = new QueryEmbedder({ ...models, main: provider }, null);
    const first = await embedder.embed('q', undefined);
    expect(await embedder.embed('q', undefined)).toEqual(first);
    expect(embed).toHaveBeenCalledTimes(2);
  });

  it('uses the model of the space: the main one by either name, or an extra one', async () => {
    const embedder = new QueryEmbedder(models, null);
    const [own, byConfigName, byModelName, extra] = await Promise.all([
      embedder.embed('q', undefined),
      embedder.embed('q', 'all-MiniLM-L6-v2'),
      embedder.embed('q', main.model),
      embedder.embed('q', second.model),
    ]);
    expect(own).toEqual(await main.embed(['q']).then(([v]) => v));
    expect(byConfigName).toEqual(own);
    expect(byModelName).toEqual(own);
    expect(extra).toHaveLength(8);
  });

  it("embeds with the model's query form when it has one (bge, e5 prefixes)", async () => {
    const provider = new TestEmbeddingProvider();
    const asQuery = jest.fn(async (texts: string[]) =>
      provider.embed(texts.map((t) => `query: ${t}`)),
    );
    const embed = jest.spyOn(provider, 'embed');
    const embedder = new QueryEmbedder(
      { ...models, main: Object.assign(provider, { embedQueries: asQuery }) },
      null,
    );
    const vector = await embedder.embed('sail rigging', undefined);
    expect(asQuery).toHaveBeenCalledWith(['sail rigging']);
    expect(vector).toEqual((await new TestEmbeddingProvider().embed(['query: sail rigging']))[0]);
    expect(embed).toHaveBeenCalledTimes(1); // once, inside embedQueries
  });

  it('rejects a model it does not serve', async () => {
    await expect(new QueryEmbedder(models, null).embed('q', 'e5-large')).rejects.toThrow(
      'model "e5-large" is not served by query-service',
    );
  });
});
