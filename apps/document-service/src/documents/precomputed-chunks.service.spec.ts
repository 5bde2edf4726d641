import { embeddedChunksSchema, Topics } from '@kb/contracts';
import { ErrorKind } from '@kb/errors';
import { getJson } from '@kb/storage';

import {
  type DocumentServiceFixture,
  documentServiceFixture,
  newAccess,
  TENANT,
} from '../testing/document-service.fixture';

/** A unit vector, as every served model gives (ADR 33). */
const vector = (dimension: number, seed = 1) => {
  const values = Array.from({ length: dimension }, (_, i) => Math.sin(seed + i));
  const norm = Math.hypot(...values);
  return values.map((v) => v / norm);
};

describe('PrecomputedChunksService', () => {
  let f: DocumentServiceFixture;
  const alice = newAccess();
  const admin = newAccess({ userId: 'root', isAdmin: true });
  beforeEach(async () => {
    f = documentServiceFixture();
    await f.knowledgeBases.create(TENANT, admin, {
      id: 'own',
      name: 'Own',
      description: '',
      tagRule: { anyOf: [] },
      allowPrecomputedVectors: true,
    });
  });

  it('stores the text as the original and sends the chunks and vectors straight to indexing', async () => {
    const document = await f.precomputed.upload(TENANT, alice, 'own', {
      title: 'Runbook',
      tags: ['ops'],
      chunks: [
        { id: 'a', text: 'Restart the queue.', embedding: vector(384, 1) },
        { id: 'b', text: 'Then drain it.', embedding: vector(384, 2), page: 2 },
      ],
    });
    expect(document).toMatchObject({
      version: 1,
      status: 'pending',
      knowledgeBaseIds: ['own'],
      contentType: 'text/plain',
    });
    // No uploaded event: nothing is parsed or embedded.
    expect(f.outbox.envelopes(Topics.document).map((e) => e.payload.kind)).toEqual([]);
    const [embedded] = f.outbox.envelopes(Topics.chunksEmbedded);
    expect(embedded!.payload).toMatchObject({
      documentId: document.id,
      version: 1,
      dimension: 384,
      chunkCount: 2,
      attributes: { knowledgeBaseIds: ['own'], tags: ['ops'], principals: ['u:alice'] },
    });
    // Precomputed vectors go through the outbox (a Postgres row): stored by reference (ADR 4).
    const claim = embedded!.payload.embeddings;
    if ('inline' in claim) throw new Error('expected the embeddings stored by reference');
    const stored = embeddedChunksSchema.parse(await getJson(f.blobs, claim.key));
    expect(stored.chunks.map((c) => [c.index, c.text, c.start, c.end, c.page])).toEqual([
      [0, 'Restart the queue.', 0, 18, undefined],
      [1, 'Then drain it.', 20, 34, 2],
    ]);
    expect(stored.chunks[1]!.vector).toEqual(vector(384, 2));
  });

  it('answers 400 invalid_chunk naming the chunk without an embedding or of another dimension', async () => {
    const upload = (chunks: Array<{ id?: string; text: string; embedding?: number[] }>) =>
      f.precomputed.upload(TENANT, alice, 'own', { title: 't', chunks });
    await expect(
      upload([
        { text: 'ok', embedding: vector(384) },
        { id: 'second', text: 'no vector' },
      ]),
    ).rejects.toMatchObject({
      code: 'invalid_chunk',
      message: 'chunks[1] (id "second") has no embedding',
    });
    await expect(upload([{ text: 'short', embedding: [1, 2, 3] }])).rejects.toMatchObject({
      code: 'invalid_chunk',
      message: 'chunks[0]: its embedding has 3 dimensions; knowledge base "own" has 384',
    });
    await expect(
      f.precomputed.upload(TENANT, alice, 'nope', { title: 't', chunks: [{ text: 'x' }] }),
    ).rejects.toMatchObject({ code: 'knowledge_base_not_found' });
    expect(f.outbox.envelopes(Topics.chunksEmbedded)).toEqual([]);
  });

  it('answers 409 precomputed_vectors_disabled unless a tenant admin allowed them (review N9)', async () => {
    await f.knowledgeBases.create(TENANT, alice, {
      id: 'plain',
      name: 'Plain',
      description: '',
      tagRule: { anyOf: [] },
    });
    const chunks = [{ text: 'Restart the queue.', embedding: vector(384) }];
    for (const id of ['plain', 'default']) {
      await expect(
        f.precomputed.upload(TENANT, alice, id, { title: 't', chunks }),
      ).rejects.toMatchObject({
        code: 'precomputed_vectors_disabled',
        kind: ErrorKind.FailedPrecondition,
        message: expect.stringContaining(
          `knowledge base "${id}" does not take pre-computed vectors`,
        ),
      });
    }
    // Turned off again (anyone who may write can): refused from then on.
    await f.knowledgeBases.update(TENANT, alice, 'own', { allowPrecomputedVectors: false });
    await expect(
      f.precomputed.upload(TENANT, alice, 'own', { title: 't', chunks }),
    ).rejects.toMatchObject({ code: 'precomputed_vectors_disabled' });
    expect(f.outbox.envelopes(Topics.chunksEmbedded)).toEqual([]);
    expect(f.outbox.envelopes(Topics.document)).toEqual([]);
  });

  it('refuses pre-computed chunks into a knowledge base that screens PII, which they would skip (ADR 51)', async () => {
    const chunks = [{ text: 'Mail jane.doe@example.com.', embedding: vector(384) }];
    await f.knowledgeBases.update(TENANT, alice, 'own', { pii: 'redact' });
    await expect(
      f.precomputed.upload(TENANT, alice, 'own', { title: 't', chunks }),
    ).rejects.toMatchObject({
      code: 'precomputed_vectors_disabled',
      message: expect.stringContaining('screens personal data (pii: redact)'),
    });
    expect(f.outbox.envelopes(Topics.chunksEmbedded)).toEqual([]);
  });

  it('answers 400 invalid_vector naming a chunk whose values are not finite or whose norm is not 1 (review N9)', async () => {
    const upload = (embedding: number[]) =>
      f.precomputed.upload(TENANT, alice, 'own', {
        title: 't',
        chunks: [
          { text: 'fine', embedding: vector(384) },
          { id: 'bad', text: 'steered', embedding },
        ],
      });
    const invalid = (message: string | RegExp) => ({
      code: 'invalid_vector',
      kind: ErrorKind.InvalidArgument,
      message: expect.stringMatching(message),
    });
    const withValue = (at: number, value: number) =>
      vector(384).map((v, i) => (i === at ? value : v));
    await expect(upload(withValue(7, Number.NaN))).rejects.toMatchObject(
      invalid(/^chunks\[1\] \(id "bad"\): its embedding's value 7 is not a finite number$/),
    );
    await expect(upload(withValue(0, Number.POSITIVE_INFINITY))).rejects.toMatchObject(
      invalid(/value 0 is not a finite number/),
    );
    // Finite, but past float4 (which every store keeps): indexing would fail on it.
    await expect(upload(withValue(3, 1e308))).rejects.toMatchObject(
      invalid(/L2 norm is 1\.000e\+308; knowledge base "own" takes unit vectors/),
    );
    await expect(upload(new Array<number>(384).fill(0))).rejects.toMatchObject(
      invalid(/L2 norm is 0\.000/),
    );
    // Not normalized: the raw output of a model that does not normalize, or a scaled centroid.
    await expect(upload(vector(384).map((v) => v * 3))).rejects.toMatchObject(
      invalid(/L2 norm is 3\.000.*divide each value by the norm/),
    );
    expect(f.outbox.envelopes(Topics.chunksEmbedded)).toEqual([]);
    // Within 1 %: float16 storage or rounding on the client's side is accepted.
    await expect(upload(vector(384).map((v) => v * 1.005))).resolves.toMatchObject({
      version: 1,
    });
  });

  it('indexes the vectors of a knowledge base whose stored chunker comes back in another key order', async () => {
    // As Postgres' jsonb returns it: keys by length, not in the schema's order.
    const stored = { size: 256, overlap: 32, strategy: 'token' };
    const own = await f.knowledgeBases.get(TENANT, 'own');
    f.knowledgeBasesRepository.seed({
      tenantId: TENANT,
      view: { ...own, id: 'tokens', chunker: stored as never },
      chunker: stored,
    });
    await f.precomputed.upload(TENANT, alice, 'tokens', {
      title: 't',
      chunks: [{ text: 'Restart the queue.', embedding: vector(384) }],
    });
    // The client's vectors go to indexing; the text is not parsed and embedded instead.
    expect(f.outbox.envelopes(Topics.document).map((e) => e.payload.kind)).toEqual([]);
    expect(f.outbox.envelopes(Topics.chunksEmbedded)).toHaveLength(1);
  });

  it('makes the same externalId the next version, indexed from the new vectors', async () => {
    const chunks = (seed: number) => [{ text: `text ${seed}`, embedding: vector(384, seed) }];
    const first = await f.precomputed.upload(TENANT, alice, 'own', {
      title: 't',
      externalId: 'ext-1',
      chunks: chunks(1),
    });
    const second = await f.precomputed.upload(TENANT, alice, 'own', {
      title: 't',
      externalId: 'ext-1',
      chunks: chunks(2),
    });
    expect(second).toMatchObject({ id: first.id, version: 2 });
    expect(f.outbox.envelopes(Topics.chunksEmbedded).map((e) => e.payload.version)).toEqual([1, 2]);
  });
});
