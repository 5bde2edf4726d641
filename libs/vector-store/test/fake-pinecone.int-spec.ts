import { Pinecone, type QueryOptions } from '@pinecone-database/pinecone';

import { FakePineconeDataPlane } from './support/fake-pinecone';
import type { FakeIndexKind } from './support/fake-pinecone-sparse';

/**
 * The FAKE Pinecone's sparse behaviour against Pinecone's documented examples and limits
 * (docs/adr/0057), through the SDK the adapters use. The records are the documentation's upsert
 * example: two records with dense values [0.1, 0.2, 0.3] / [0.2, 0.3, 0.4] and sparse values at
 * indices [10, 45, 16] / [15, 40, 11].
 */
describe('FAKE Pinecone: sparse and sparse-dense vectors as documented', () => {
  const sparse1 = { indices: [10, 45, 16], values: [0.5, 0.5, 0.2] };
  const sparse2 = { indices: [15, 40, 11], values: [0.4, 0.5, 0.2] };
  const fakes: FakePineconeDataPlane[] = [];

  async function indexOf(kind: FakeIndexKind) {
    const fake = new FakePineconeDataPlane(kind);
    fakes.push(fake);
    const client = new Pinecone({ apiKey: 'fake-key', maxRetries: 0 });
    return client.index({ host: await fake.start() }).namespace('ns');
  }
  afterAll(() => Promise.all(fakes.map((f) => f.stop())));

  const sparseOnly = (options: object) => options as unknown as QueryOptions;

  it('a sparse index scores by the sparse dot product and leaves out records scoring 0', async () => {
    const ns = await indexOf({ vectorType: 'sparse' });
    await ns.upsert({
      records: [
        { id: 'vec1', sparseValues: sparse1 },
        { id: 'vec2', sparseValues: sparse2 },
      ],
    });
    const { matches } = await ns.query(sparseOnly({ sparseVector: sparse1, topK: 10 }));
    // 0.5·0.5 + 0.5·0.5 + 0.2·0.2; vec2 shares no index with the query.
    expect(matches.map((m) => m.id)).toEqual(['vec1']);
    expect(matches[0]!.score).toBeCloseTo(0.54, 6);
    const both = await ns.query(
      sparseOnly({ sparseVector: { indices: [10, 40], values: [1, 2] }, topK: 10 }),
    );
    expect(both.matches.map((m) => [m.id, m.score])).toEqual([
      ['vec2', 1],
      ['vec1', 0.5],
    ]);
  });

  it('a dotproduct dense index sums the dense and sparse dot products', async () => {
    const ns = await indexOf({ vectorType: 'dense', metric: 'dotproduct' });
    await ns.upsert({
      records: [
        { id: 'vec1', values: [0.1, 0.2, 0.3], sparseValues: sparse1 },
        { id: 'vec2', values: [0.2, 0.3, 0.4], sparseValues: sparse2 },
      ],
    });
    const { matches } = await ns.query({
      vector: [0.1, 0.2, 0.3],
      sparseVector: sparse1,
      topK: 10,
    });
    // vec1: 0.14 dense + 0.54 sparse; vec2: 0.20 dense + 0.
    expect(matches.map((m) => m.id)).toEqual(['vec1', 'vec2']);
    expect(matches[0]!.score).toBeCloseTo(0.68, 6);
    expect(matches[1]!.score).toBeCloseTo(0.2, 6);
  });

  it('refuses what Pinecone documents it refuses, with a 400', async () => {
    const sparseIndex = await indexOf({ vectorType: 'sparse' });
    const cosine = await indexOf({ vectorType: 'dense', metric: 'cosine' });
    // The SDK maps a 400 to PineconeBadRequestError, the body's message in its own.
    const refused = async (promise: Promise<unknown>, reason: RegExp) => {
      const error = await promise.then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.name).toBe('PineconeBadRequestError');
      expect(error?.message).toMatch(reason);
    };
    const tooMany = {
      indices: Array.from({ length: 1001 }, (_, i) => i),
      values: Array.from({ length: 1001 }, () => 1),
    };
    await refused(
      sparseIndex.upsert({
        records: [{ id: 'a', sparseValues: { indices: [1, 2], values: [1] } }],
      }),
      /same length/,
    );
    await refused(
      sparseIndex.upsert({ records: [{ id: 'a', sparseValues: tooMany }] }),
      /at most 1000/,
    );
    await refused(
      sparseIndex.upsert({ records: [{ id: 'a', values: [1, 2], sparseValues: sparse1 }] }),
      /no dense values/,
    );
    await refused(
      sparseIndex.query(sparseOnly({ sparseVector: sparse1, topK: 1001 })),
      /topK 1001/,
    );
    await refused(sparseIndex.query({ vector: [1, 2, 3], topK: 1 }), /sparse vector/);
    await refused(
      cosine.upsert({ records: [{ id: 'a', sparseValues: sparse1 }] }),
      /must also contain dense values/,
    );
    // A cosine index takes the sparse values but refuses to be queried with them.
    await cosine.upsert({ records: [{ id: 'a', values: [0.1, 0.2, 0.3], sparseValues: sparse1 }] });
    await refused(
      cosine.query({ vector: [0.1, 0.2, 0.3], sparseVector: sparse1, topK: 1 }),
      /does not support sparse values/,
    );
    // Nothing of a refused upsert was written.
    expect((await sparseIndex.fetch({ ids: ['a'] })).records).toEqual({});
  });
});
