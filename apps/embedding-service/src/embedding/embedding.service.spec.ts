import { createHash, randomUUID } from 'node:crypto';

import {
  type DocumentParsed,
  embeddedChunksSchema,
  type ParsedDocument,
  Topics,
} from '@kb/contracts';
import { type EmbeddingProvider, TestEmbeddingProvider } from '@kb/embeddings';
import { INLINE_PAYLOAD_MAX_BYTES, PermanentError } from '@kb/kafka';
import { putJson } from '@kb/storage';
import { MemoryBlobStore, MemoryEventProducer } from '@kb/testing';

import { CachedEmbedder } from '../cache/cached.embedder';
import type { EmbeddingCache } from '../cache/embedding-cache.repository';
import { EmbeddingService } from './embedding.service';

/** The Postgres cache's behaviour in a map: first write of a (model, text) wins. */
class MemoryEmbeddingCache implements EmbeddingCache {
  readonly entries = new Map<string, number[]>();
  down = false;
  async get(model: string, hashes: string[]): Promise<Map<string, number[]>> {
    if (this.down) throw new Error('cache down');
    const found = new Map<string, number[]>();
    for (const hash of hashes) {
      const vector = this.entries.get(`${model}/${hash}`);
      if (vector) found.set(hash, vector);
    }
    return found;
  }
  async put(model: string, entries: Array<{ sha256: string; vector: number[] }>): Promise<void> {
    for (const { sha256, vector } of entries) {
      if (!this.entries.has(`${model}/${sha256}`)) this.entries.set(`${model}/${sha256}`, vector);
    }
  }
}

/** The hashing test model, recording each batch it is asked to embed. */
class RecordingProvider implements EmbeddingProvider {
  readonly batches: string[][] = [];
  private readonly inner: TestEmbeddingProvider;
  /** Texts the model "forgets" to return a vector for. */
  readonly drop = new Set<string>();
  constructor(dimension = 8) {
    this.inner = new TestEmbeddingProvider(dimension);
  }
  get model(): string {
    return this.inner.model;
  }
  get dimension(): number {
    return this.inner.dimension;
  }
  async embed(texts: string[]): Promise<number[][]> {
    this.batches.push(texts);
    return this.inner.embed(texts.filter((text) => !this.drop.has(text)));
  }
  get texts(): string[] {
    return this.batches.flat();
  }
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

function setUp(options: { batchSize?: number } = {}) {
  const blobs = new MemoryBlobStore();
  const producer = new MemoryEventProducer();
  const cache = new MemoryEmbeddingCache();
  const main = new RecordingProvider(8);
  const other = new RecordingProvider(16);
  const embedders = new Map([
    ['default-model', new CachedEmbedder(main, cache, options.batchSize ?? 32)],
    [main.model, new CachedEmbedder(main, cache, options.batchSize ?? 32)],
    [other.model, new CachedEmbedder(other, cache, options.batchSize ?? 32)],
  ]);
  const service = new EmbeddingService(blobs, producer, embedders);
  /** The `parsed` event of a document's chunks for `model`, carried inline or stored by reference. */
  const parsedEvent = async (
    texts: string[],
    model = main.model,
    tenant = 't1',
    carried: 'inline' | 'stored' = 'inline',
  ): Promise<DocumentParsed> => {
    const documentId = randomUUID();
    const parsed: ParsedDocument = {
      documentId,
      version: 3,
      title: 'Tides',
      chunks: texts.map((text, index) => ({
        index,
        text,
        start: index * 100,
        end: index * 100 + text.length,
        sha256: sha(text),
        tokenCount: text.split(' ').length,
        headingPath: [],
      })),
    };
    const key = `derived/${tenant}/${documentId}/v3/chunks.abc.json`;
    if (carried === 'stored') await putJson(blobs, key, parsed);
    return {
      documentId,
      version: 3,
      title: 'Tides',
      chunkCount: texts.length,
      chunks: carried === 'stored' ? { bucket: blobs.bucket, key } : { inline: parsed },
      attributes: {
        knowledgeBaseIds: ['kb'],
        tags: ['sea'],
        metadata: {},
        uploadedAt: 0,
        principals: [],
      },
      pipeline: {
        key: 'abcdef123456',
        model,
        space: `${tenant}~abcdef123456`,
        knowledgeBaseIds: ['kb'],
        versionSpaces: [`${tenant}~abcdef123456`],
      },
    };
  };
  return { blobs, producer, cache, main, other, service, parsedEvent };
}

describe('EmbeddingService', () => {
  it('announces a vector per chunk in the event for the pipeline, after an embedding status', async () => {
    const { blobs, producer, main, service, parsedEvent } = setUp();
    const event = await parsedEvent(['the moon pulls the sea', 'spring tides are highest']);
    await service.embedDocument('t1', event);

    expect(producer.events(Topics.documentStatus).map((e) => e.payload)).toEqual([
      { documentId: event.documentId, version: 3, status: 'embedding' },
    ]);
    const [embedded] = producer.events(Topics.chunksEmbedded);
    expect(embedded!.tenantId).toBe('t1');
    expect(embedded!.payload).toEqual({
      documentId: event.documentId,
      version: 3,
      model: main.model,
      dimension: 8,
      chunkCount: 2,
      embeddings: { inline: expect.objectContaining({ title: 'Tides', model: main.model }) },
      attributes: event.attributes,
      pipeline: event.pipeline,
    });
    const carried = embedded!.payload.embeddings;
    if (!('inline' in carried)) throw new Error('expected the embeddings in the event');
    expect(carried.inline.chunks.map((c) => [c.text, c.vector.length])).toEqual([
      ['the moon pulls the sea', 8],
      ['spring tides are highest', 8],
    ]);
    expect(carried.inline.chunks[0]!.vector).toEqual(
      (await new TestEmbeddingProvider(8).embed(['the moon pulls the sea']))[0],
    );
    // Small enough to carry: no claim-check object was written.
    expect(blobs.keys()).toEqual([]);
  });

  it('reads chunks stored by reference, and stores embeddings too large to carry', async () => {
    const { blobs, producer, main, service, parsedEvent } = setUp();
    // 8 dimensions a chunk: about 2,000 chunks' vectors and texts pass the inline limit.
    const texts = Array.from(
      { length: 2500 },
      (_, i) => `tide table entry number ${i} for the bay`,
    );
    const event = await parsedEvent(texts, main.model, 't1', 'stored');
    await service.embedDocument('t1', event);

    const [embedded] = producer.events(Topics.chunksEmbedded);
    const key = `derived/t1/${event.documentId}/v3/embeddings.${main.model}.abcdef123456.json`;
    expect(embedded!.payload.embeddings).toEqual({ bucket: blobs.bucket, key });
    const stored = embeddedChunksSchema.parse(JSON.parse((await blobs.get(key)).toString()));
    expect(Buffer.byteLength(JSON.stringify(stored))).toBeGreaterThan(INLINE_PAYLOAD_MAX_BYTES);
    expect(stored.chunks).toHaveLength(2500);
    expect(stored.chunks[7]!.text).toBe('tide table entry number 7 for the bay');
    expect(stored.chunks[7]!.vector).toEqual(
      (await new TestEmbeddingProvider(8).embed([texts[7]!]))[0],
    );
  });

  it('dead-letters a reference to another tenant’s chunks before anything is published', async () => {
    const { main, producer, service, parsedEvent } = setUp();
    const event = await parsedEvent(['the moon pulls the sea'], main.model, 't2', 'stored');
    await expect(
      service.embedDocument('t1', {
        ...event,
        pipeline: { ...event.pipeline, space: 't1~abcdef123456' },
      }),
    ).rejects.toThrow(PermanentError);
    expect(producer.messages).toEqual([]);
  });

  it('sends only texts the model has not embedded before, each once, in batches', async () => {
    const { main, service, parsedEvent } = setUp({ batchSize: 2 });
    await service.embedDocument('t1', await parsedEvent(['a b', 'c d', 'a b']));
    expect(main.batches).toEqual([['a b', 'c d']]);
    // Another tenant's document sharing a text: a cache hit, whoever embedded it first.
    await service.embedDocument(
      't2',
      await parsedEvent(['c d', 'e f', 'g h', 'i j'], main.model, 't2'),
    );
    expect(main.batches.slice(1)).toEqual([['e f', 'g h'], ['i j']]);
    await service.embedDocument('t1', await parsedEvent(['i j', 'a b']));
    expect(main.texts).toEqual(['a b', 'c d', 'e f', 'g h', 'i j']);
  });

  it('caches per model: the same text under another model reaches that model', async () => {
    const { main, other, service, parsedEvent } = setUp();
    await service.embedDocument('t1', await parsedEvent(['a b'], main.model));
    await service.embedDocument('t1', await parsedEvent(['a b'], other.model));
    expect(main.texts).toEqual(['a b']);
    expect(other.texts).toEqual(['a b']);
  });

  it('embeds everything when the cache is down, and still stores the document', async () => {
    const { cache, main, producer, service, parsedEvent } = setUp();
    await service.embedDocument('t1', await parsedEvent(['a b']));
    cache.down = true;
    await service.embedDocument('t1', await parsedEvent(['a b']));
    expect(main.texts).toEqual(['a b', 'a b']);
    expect(producer.events(Topics.chunksEmbedded)).toHaveLength(2);
  });

  it('fails the document when the model returns no vector for a chunk, storing and caching nothing', async () => {
    const { blobs, cache, main, producer, service, parsedEvent } = setUp();
    main.drop.add('c d');
    const event = await parsedEvent(['a b', 'c d']);
    const before = blobs.keys();
    const failure = service.embedDocument('t1', event);
    await expect(failure).rejects.toThrow(PermanentError);
    await expect(failure).rejects.toMatchObject({
      reason: 'embedding_error',
      message: expect.stringContaining('no vector for chunk 1'),
    });
    expect(blobs.keys()).toEqual(before);
    expect(producer.events(Topics.chunksEmbedded)).toEqual([]);
    expect([...cache.entries.keys()]).not.toContain(`${main.model}/${sha('c d')}`);
  });

  it('refuses a model it does not serve', async () => {
    const { main, service, parsedEvent } = setUp();
    await expect(
      service.embedDocument('t1', await parsedEvent(['a b'], 'no-such-model')),
    ).rejects.toMatchObject({
      reason: 'embedding_error',
      message: expect.stringContaining('no-such-model'),
    });
    expect(main.texts).toEqual([]);
  });

  it('serves the default pipeline under the configured model name', async () => {
    const { main, producer, service, parsedEvent } = setUp();
    await service.embedDocument('t1', await parsedEvent(['a b'], 'default-model'));
    expect(main.texts).toEqual(['a b']);
    expect(producer.events(Topics.chunksEmbedded)[0]!.payload.model).toBe(main.model);
  });
});
