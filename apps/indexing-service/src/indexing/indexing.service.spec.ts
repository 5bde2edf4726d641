import { randomUUID } from 'node:crypto';

import {
  type ChunksEmbedded,
  type DocumentStatusChanged,
  type EmbeddedChunks,
  type IndexSpace,
  parseFilter,
  pipelineSpace,
  tenantSpace,
  toIndexSpace,
  type Topic,
  Topics,
  toTenantId,
} from '@kb/contracts';
import type { OutgoingEvent } from '@kb/kafka';
import type { BlobStore } from '@kb/storage';
import {
  MemoryDocumentIndexState,
  MemoryIndexGenerations,
  MemoryLexicalIndex,
  MemoryVectorStore,
} from '@kb/testing';
import type { VectorRecord } from '@kb/vector-store';
import { Logger } from '@nestjs/common';

import { IndexingService } from './indexing.service';

const tenant = toTenantId('acme');
const own = tenantSpace(tenant);
const other = pipelineSpace(tenant, 'abcdef123456');
const DIM = 4;

/** A vector store whose upserts can let another event in first: a change arriving mid-write. */
class RacingVectorStore extends MemoryVectorStore {
  beforeUpsert: (() => Promise<void>) | undefined;

  override async upsert(space: IndexSpace, records: VectorRecord[]): Promise<void> {
    const race = this.beforeUpsert;
    this.beforeUpsert = undefined;
    await race?.();
    await super.upsert(space, records);
  }
}

function setup() {
  const stored = new Map<string, Buffer>();
  const blobs: BlobStore = {
    bucket: 'test',
    ensureBucket: async () => undefined,
    put: async (key, body) => {
      if (typeof body !== 'string') throw new Error('this stub stores strings only');
      stored.set(key, Buffer.from(body));
    },
    get: async (key) => stored.get(key) ?? Promise.reject(new Error(`no blob ${key}`)),
    exists: async (key) => stored.has(key),
    delete: async (key) => void stored.delete(key),
    ping: async () => undefined,
  };
  const published: OutgoingEvent<Topic>[] = [];
  const vectors = new RacingVectorStore();
  const lexical = new MemoryLexicalIndex();
  const generations = new MemoryIndexGenerations();
  const state = new MemoryDocumentIndexState();
  const service = new IndexingService(
    blobs,
    { publish: async (event) => void published.push(event) },
    vectors,
    lexical,
    generations,
    state,
  );

  /** Stores a version's embeddings and returns its `chunks embedded` event. */
  const embedded = async (
    documentId: string,
    version: number,
    options: { chunks?: number; space?: IndexSpace; versionSpaces?: IndexSpace[] } = {},
  ): Promise<ChunksEmbedded> => {
    const { chunks = 2, space = own, versionSpaces = [space] } = options;
    const key = `derived/${tenant}/${documentId}/v${version}/embeddings.${space}.json`;
    const document: EmbeddedChunks = {
      documentId,
      version,
      title: 'Handbook',
      model: 'test-model',
      dimension: DIM,
      chunks: Array.from({ length: chunks }, (_, index) => ({
        index,
        text: `version ${version} chunk ${index} about onboarding`,
        start: index * 10,
        end: index * 10 + 9,
        sha256: 'x',
        tokenCount: 5,
        // The first chunk is located as a paged, headed format's would be.
        ...(index === 0 ? { page: 2 } : {}),
        headingPath: index === 0 ? ['Handbook', 'Day one'] : [],
        vector: Array.from({ length: DIM }, (_, i) => (i === index % DIM ? 1 : 0)),
      })),
    };
    await blobs.put(key, JSON.stringify(document));
    return {
      documentId,
      version,
      model: 'test-model',
      dimension: DIM,
      chunkCount: chunks,
      embeddings: { bucket: 'test', key },
      attributes: {
        knowledgeBaseIds: ['kb1'],
        tags: ['draft'],
        metadata: {},
        uploadedAt: 0,
        principals: ['u:ann'],
      },
      pipeline: {
        key: space === own ? 'default00000' : 'abcdef123456',
        model: 'test-model',
        space,
        knowledgeBaseIds: ['kb1'],
        versionSpaces,
      },
    };
  };

  const statuses = (documentId: string) =>
    published
      .filter((event) => event.topic === Topics.documentStatus)
      .map((event) => event.payload as DocumentStatusChanged)
      .filter((payload) => payload.documentId === documentId)
      .map(({ version, status, chunkCount }) => ({ version, status, chunkCount }));

  /** The versions of a document each index holds in a space. */
  const held = async (space: IndexSpace, documentId: string) => {
    const versions = { vectors: [] as number[], lexical: [] as number[] };
    for await (const entry of vectors.documentVersions(space)) {
      if (entry.documentId === documentId) versions.vectors = entry.versions;
    }
    for await (const entry of lexical.documentVersions(space)) {
      if (entry.documentId === documentId) versions.lexical = entry.versions;
    }
    return versions;
  };

  /** How many of a document's chunks a reader with these principals finds in both indexes. */
  const visible = async (space: IndexSpace, principals: string[], filter?: { tags: string }) => {
    const scope = { topK: 50, principals, filter: parseFilter(filter) };
    const [semantic, bm25] = await Promise.all([
      vectors.query(space, { vector: [1, 0, 0, 0], ...scope }),
      lexical.search(space, { text: 'onboarding', ...scope }),
    ]);
    return { vectors: semantic.length, lexical: bm25.length };
  };

  return { service, vectors, lexical, generations, state, embedded, statuses, held, visible };
}

beforeAll(() => Logger.overrideLogger(false));

describe('IndexingService', () => {
  it('indexes a version in both indexes, says indexed with its chunk count, and bumps the generation', async () => {
    const { service, lexical, generations, embedded, statuses, held } = setup();
    const doc = randomUUID();
    await service.indexDocument(tenant, await embedded(doc, 1, { chunks: 3 }));
    expect(await held(own, doc)).toEqual({ vectors: [1], lexical: [1] });
    const chunk = (chunkIndex: number) => ({ documentId: doc, documentVersion: 1, chunkIndex });
    expect(await lexical.locations(own, [chunk(0), chunk(1)])).toEqual(
      new Map([
        [`${doc}#1#0`, { page: 2, headingPath: ['Handbook', 'Day one'] }],
        [`${doc}#1#1`, { headingPath: [] }],
      ]),
    );
    expect(statuses(doc)).toEqual([
      { version: 1, status: 'indexing', chunkCount: undefined },
      { version: 1, status: 'indexed', chunkCount: 3 },
    ]);
    expect(await generations.current(tenant)).toBe(1);
  });

  it('indexes a replayed event once', async () => {
    const { service, vectors, embedded } = setup();
    const doc = randomUUID();
    const event = await embedded(doc, 1, { chunks: 3 });
    await service.indexDocument(tenant, event);
    await service.indexDocument(tenant, event);
    expect(await vectors.countDocument(own, doc)).toBe(3);
  });

  it('dead-letters an event that names another tenant’s space, writing nothing there', async () => {
    const { service, embedded, held } = setup();
    const doc = randomUUID();
    const theirs = toIndexSpace('globex');
    const event = await embedded(doc, 1, { space: theirs });
    await expect(service.indexDocument(tenant, event)).rejects.toMatchObject({
      name: 'PermanentError',
      reason: 'indexing_error',
    });
    expect(await held(theirs, doc)).toEqual({ vectors: [], lexical: [] });
  });

  describe('tombstones', () => {
    it('refuses embeddings of a document deleted before they arrive', async () => {
      const { service, embedded, statuses, held } = setup();
      const doc = randomUUID();
      const late = await embedded(doc, 1);
      await service.onDocumentEvent(tenant, { kind: 'deleted', documentId: doc });
      await service.indexDocument(tenant, late);
      expect(await held(own, doc)).toEqual({ vectors: [], lexical: [] });
      expect(statuses(doc)).toEqual([]);
    });

    it('removes a document deleted after it was indexed from every space, and keeps it out', async () => {
      const { service, state, generations, embedded, held } = setup();
      const doc = randomUUID();
      const spaces = [own, other];
      await service.indexDocument(tenant, await embedded(doc, 1, { versionSpaces: spaces }));
      await service.indexDocument(
        tenant,
        await embedded(doc, 1, { space: other, versionSpaces: spaces }),
      );
      const before = await generations.current(tenant);

      expect(await service.deleteDocument(tenant, doc)).toEqual({ vectors: 4, lexical: 4 });
      expect(await held(own, doc)).toEqual({ vectors: [], lexical: [] });
      expect(await held(other, doc)).toEqual({ vectors: [], lexical: [] });
      expect(await state.spacesOf(tenant, doc)).toEqual([own]);
      expect(await generations.current(tenant)).toBeGreaterThan(before);

      // A redelivered (or re-driven) event of the deleted document stays out.
      await service.indexDocument(tenant, await embedded(doc, 2));
      expect(await held(own, doc)).toEqual({ vectors: [], lexical: [] });
    });
  });

  describe('version claims', () => {
    it('ignores a version older than the one indexed', async () => {
      const { service, embedded, statuses, held } = setup();
      const doc = randomUUID();
      await service.indexDocument(tenant, await embedded(doc, 2));
      await service.indexDocument(tenant, await embedded(doc, 1));
      expect(await held(own, doc)).toEqual({ vectors: [2], lexical: [2] });
      expect(statuses(doc).filter((s) => s.version === 1)).toEqual([]);
    });

    it('replaces a version with a newer one, removing the older chunks', async () => {
      const { service, embedded, statuses, held } = setup();
      const doc = randomUUID();
      await service.indexDocument(tenant, await embedded(doc, 1, { chunks: 3 }));
      await service.indexDocument(tenant, await embedded(doc, 2, { chunks: 1 }));
      expect(await held(own, doc)).toEqual({ vectors: [2], lexical: [2] });
      expect(statuses(doc).at(-1)).toEqual({ version: 2, status: 'indexed', chunkCount: 1 });
    });

    it('claims each space on its own: a newer version elsewhere does not block this one', async () => {
      const { service, embedded, held } = setup();
      const doc = randomUUID();
      await service.indexDocument(tenant, await embedded(doc, 2, { space: other }));
      await service.indexDocument(tenant, await embedded(doc, 1));
      expect(await held(own, doc)).toEqual({ vectors: [1], lexical: [1] });
    });
  });

  describe('waiting for every space of the version', () => {
    it('says indexed only once every pipeline is in, with the first space’s chunk count', async () => {
      const { service, embedded, statuses } = setup();
      const doc = randomUUID();
      const versionSpaces = [own, other];
      await service.indexDocument(
        tenant,
        await embedded(doc, 1, { space: other, chunks: 5, versionSpaces }),
      );
      expect(statuses(doc).map((s) => s.status)).toEqual(['indexing']);
      await service.indexDocument(tenant, await embedded(doc, 1, { chunks: 2, versionSpaces }));
      expect(statuses(doc).at(-1)).toEqual({ version: 1, status: 'indexed', chunkCount: 2 });
    });

    it('does not count a space that holds an older version only', async () => {
      const { service, embedded, statuses } = setup();
      const doc = randomUUID();
      const versionSpaces = [own, other];
      await service.indexDocument(tenant, await embedded(doc, 1, { space: other, versionSpaces }));
      await service.indexDocument(tenant, await embedded(doc, 2, { versionSpaces }));
      expect(statuses(doc).filter((s) => s.status === 'indexed')).toEqual([]);
    });

    it('records which space serves the pipeline’s knowledge bases', async () => {
      const { service, state, embedded } = setup();
      await service.indexDocument(tenant, await embedded(randomUUID(), 1, { space: other }));
      expect(await state.knowledgeBaseSpaces(tenant, ['kb1'])).toEqual([
        { space: other, model: 'test-model' },
      ]);
    });
  });

  describe('ACL and attribute changes', () => {
    it('gives a version in flight the ACL and attributes changed since its upload', async () => {
      const { service, embedded, visible } = setup();
      const doc = randomUUID();
      const inFlight = await embedded(doc, 1);
      await service.onDocumentEvent(tenant, {
        kind: 'acl_changed',
        documentId: doc,
        principals: ['u:bob'],
      });
      await service.onDocumentEvent(tenant, {
        kind: 'attributes_changed',
        documentId: doc,
        attributes: { knowledgeBaseIds: ['kb1'], tags: ['final'], metadata: {} },
        spaces: [own],
      });
      await service.indexDocument(tenant, inFlight);
      expect(await visible(own, ['u:ann'])).toEqual({ vectors: 0, lexical: 0 });
      expect(await visible(own, ['u:bob'])).toEqual({ vectors: 2, lexical: 2 });
      expect(await visible(own, ['u:bob'], { tags: 'final' })).toEqual({ vectors: 2, lexical: 2 });
      expect(await visible(own, ['u:bob'], { tags: 'draft' })).toEqual({ vectors: 0, lexical: 0 });
    });

    it('re-applies an ACL that changed while the version was being written', async () => {
      const { service, vectors, embedded, visible } = setup();
      const doc = randomUUID();
      const event = await embedded(doc, 1);
      // The ACL change is handled after the service read the ACL, before its chunks are in.
      vectors.beforeUpsert = () =>
        service.onDocumentEvent(tenant, {
          kind: 'acl_changed',
          documentId: doc,
          principals: ['u:bob'],
        });
      await service.indexDocument(tenant, event);
      expect(await visible(own, ['u:ann'])).toEqual({ vectors: 0, lexical: 0 });
      expect(await visible(own, ['u:bob'])).toEqual({ vectors: 2, lexical: 2 });
    });

    it('changes the ACL and attributes of indexed chunks in every space, in place', async () => {
      const { service, generations, embedded, visible } = setup();
      const doc = randomUUID();
      await service.indexDocument(tenant, await embedded(doc, 1));
      await service.indexDocument(tenant, await embedded(doc, 1, { space: other }));
      const before = await generations.current(tenant);
      await service.setPrincipals(tenant, doc, ['g:eng']);
      await service.setAttributes(tenant, doc, {
        knowledgeBaseIds: ['kb1'],
        tags: ['final'],
        metadata: {},
      });
      for (const space of [own, other]) {
        expect(await visible(space, ['g:eng'], { tags: 'final' })).toEqual({
          vectors: 2,
          lexical: 2,
        });
        expect(await visible(space, ['u:ann'])).toEqual({ vectors: 0, lexical: 0 });
      }
      expect(await generations.current(tenant)).toBe(before + 2);
    });

    it('removes a document from the spaces of pipelines it left', async () => {
      const { service, state, embedded, held } = setup();
      const doc = randomUUID();
      await service.indexDocument(tenant, await embedded(doc, 1));
      await service.indexDocument(tenant, await embedded(doc, 1, { space: other }));
      await service.onDocumentEvent(tenant, {
        kind: 'attributes_changed',
        documentId: doc,
        attributes: { knowledgeBaseIds: [], tags: [], metadata: {} },
        spaces: [own],
      });
      expect(await held(other, doc)).toEqual({ vectors: [], lexical: [] });
      expect(await held(own, doc)).toEqual({ vectors: [1], lexical: [1] });
      expect(await state.spacesOf(tenant, doc)).toEqual([own]);
    });
  });
});
