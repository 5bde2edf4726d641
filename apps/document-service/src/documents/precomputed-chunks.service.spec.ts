import { embeddedChunksSchema, Topics } from '@kb/contracts';
import { getJson } from '@kb/storage';

import {
  type DocumentServiceFixture,
  documentServiceFixture,
  newAccess,
  TENANT,
} from '../testing/document-service.fixture';

const vector = (dimension: number, seed = 1) =>
  Array.from({ length: dimension }, (_, i) => Math.sin(seed + i));

describe('PrecomputedChunksService', () => {
  let f: DocumentServiceFixture;
  const alice = newAccess();
  beforeEach(async () => {
    f = documentServiceFixture();
    await f.knowledgeBases.create(TENANT, alice, {
      id: 'own',
      name: 'Own',
      description: '',
      tagRule: { anyOf: [] },
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
