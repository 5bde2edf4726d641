import { randomUUID } from 'node:crypto';

import {
  type ChunksEmbedded,
  type DocumentStatusChanged,
  type EditableAttributes,
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
import {
  MemoryBlobStore,
  MemoryDocumentIndexState,
  MemoryIndexGenerations,
  MemoryLexicalIndex,
  MemoryVectorStore,
} from '@kb/testing';
import type { VectorRecord } from '@kb/vector-store';
import { Logger } from '@nestjs/common';

import { DerivedCleanupTask } from '../removal/derived-cleanup.task';
import { DocumentRemovalService } from '../removal/document-removal.service';
import { AccessReconciliationService, needsRepair } from './access-reconciliation.service';
import { IndexingService } from './indexing.service';

const tenant = toTenantId('acme');
const own = tenantSpace(tenant);
const other = pipelineSpace(tenant, 'abcdef123456');
const DIM = 4;

/**
 * A vector store whose upserts can let another event in first (a change arriving mid-write), and
 * which can be down: every write fails while `down` is set, as a restarting server would.
 */
class RacingVectorStore extends MemoryVectorStore {
  beforeUpsert: (() => Promise<void>) | undefined;
  down = false;
  /**
   * Attribute edits rewrite whole records, as Pinecone's do (review M8): the principals written
   * are the ones given, else the ones a read returned before the rewrite. `betweenReadAndWrite`
   * lets another change land between that read and the write; while `lagging`, reads answer from
   * before the writes made since (an eventually consistent fetch).
   */
  wholeRecords = false;
  betweenReadAndWrite: (() => Promise<void>) | undefined;
  lagging = false;
  private readonly read = new Map<string, string[]>();

  override async upsert(space: IndexSpace, records: VectorRecord[]): Promise<void> {
    const race = this.beforeUpsert;
    this.beforeUpsert = undefined;
    await race?.();
    this.failWhenDown();
    await super.upsert(space, records);
    for (const record of records) {
      this.wrote(space, record.documentId, record.attributes.principals);
    }
  }

  override async setPrincipals(space: IndexSpace, documentId: string, principals: string[]) {
    this.failWhenDown();
    this.wrote(space, documentId, principals);
    return super.setPrincipals(space, documentId, principals);
  }

  override async setAttributes(
    space: IndexSpace,
    documentId: string,
    attributes: EditableAttributes,
    principals?: string[],
  ): Promise<number> {
    if (!this.wholeRecords) return super.setAttributes(space, documentId, attributes);
    const fetched = this.read.get(`${space} ${documentId}`);
    const race = this.betweenReadAndWrite;
    this.betweenReadAndWrite = undefined;
    await race?.();
    const count = await super.setAttributes(space, documentId, attributes);
    const written = principals ?? fetched;
    if (written) await super.setPrincipals(space, documentId, written);
    return count;
  }

  private wrote(space: IndexSpace, documentId: string, principals: string[]): void {
    if (!this.lagging) this.read.set(`${space} ${documentId}`, [...principals]);
  }

  private failWhenDown(): void {
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
  }
}

function setup() {
  const blobs = new MemoryBlobStore();
  /** Tenants whose cached search results were purged, in order. */
  const purged: string[] = [];
  const searchCache = {
    purgeTenant: async (tenantId: string) => (purged.push(tenantId), 3),
    raiseGeneration: async () => undefined,
    close: async () => undefined,
  };
  const published: OutgoingEvent<Topic>[] = [];
  const vectors = new RacingVectorStore();
  const lexical = new MemoryLexicalIndex();
  const generations = new MemoryIndexGenerations();
  const state = new MemoryDocumentIndexState();
  const removal = new DocumentRemovalService(
    blobs,
    vectors,
    lexical,
    generations,
    state,
    searchCache,
  );
  const service = new IndexingService(
    blobs,
    { publish: async (event) => void published.push(event) },
    vectors,
    lexical,
    generations,
    state,
    removal,
  );

  /** A version's `chunks embedded` event, its embeddings stored by reference or carried inline. */
  const embedded = async (
    documentId: string,
    version: number,
    options: {
      chunks?: number;
      space?: IndexSpace;
      versionSpaces?: IndexSpace[];
      carried?: 'inline' | 'stored';
    } = {},
  ): Promise<ChunksEmbedded> => {
    const { chunks = 2, space = own, versionSpaces = [space], carried = 'stored' } = options;
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
    if (carried === 'stored') await blobs.put(key, JSON.stringify(document));
    return {
      documentId,
      version,
      model: 'test-model',
      dimension: DIM,
      chunkCount: chunks,
      embeddings: carried === 'stored' ? { bucket: 'test', key } : { inline: document },
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

  /** The document's parsed chunks and embeddings left in S3. */
  const derived = (documentId: string) =>
    blobs.keys().filter((key) => key.startsWith(`derived/${tenant}/${documentId}/`));
  const access = new AccessReconciliationService(service, state);

  return {
    service,
    removal,
    access,
    vectors,
    lexical,
    generations,
    state,
    blobs,
    purged,
    embedded,
    statuses,
    held,
    visible,
    derived,
  };
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

  it('indexes embeddings carried in the event like stored ones', async () => {
    const { service, lexical, embedded, statuses, held, visible } = setup();
    const doc = randomUUID();
    await service.indexDocument(tenant, await embedded(doc, 1, { chunks: 3, carried: 'inline' }));
    expect(await held(own, doc)).toEqual({ vectors: [1], lexical: [1] });
    expect(await visible(own, ['u:ann'])).toEqual({ vectors: 3, lexical: 3 });
    expect(
      await lexical.locations(own, [{ documentId: doc, documentVersion: 1, chunkIndex: 0 }]),
    ).toEqual(new Map([[`${doc}#1#0`, { page: 2, headingPath: ['Handbook', 'Day one'] }]]));
    expect(statuses(doc).at(-1)).toEqual({ version: 1, status: 'indexed', chunkCount: 3 });
  });

  it('dead-letters a reference to another tenant’s embeddings, writing nothing', async () => {
    const { service, embedded, held } = setup();
    const doc = randomUUID();
    const event = await embedded(doc, 1);
    const forged = {
      ...event,
      embeddings: { bucket: 'test', key: `derived/globex/${doc}/v1/e.json` },
    };
    await expect(service.indexDocument(tenant, forged)).rejects.toMatchObject({
      name: 'PermanentError',
      reason: 'indexing_error',
    });
    expect(await held(own, doc)).toEqual({ vectors: [], lexical: [] });
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

      expect(await service.deleteDocument(tenant, doc)).toEqual({
        vectors: 4,
        lexical: 4,
        derived: 2, // one embeddings object per pipeline
        cached: 3,
      });
      expect(await held(own, doc)).toEqual({ vectors: [], lexical: [] });
      expect(await held(other, doc)).toEqual({ vectors: [], lexical: [] });
      expect(await state.spacesOf(tenant, doc)).toEqual([own]);
      expect(await generations.current(tenant)).toBeGreaterThan(before);

      // A redelivered (or re-driven) event of the deleted document stays out.
      await service.indexDocument(tenant, await embedded(doc, 2));
      expect(await held(own, doc)).toEqual({ vectors: [], lexical: [] });
    });

    it('leaves nothing of a deleted document but its tombstone: derived objects, ACL, attributes, cache', async () => {
      const { service, state, purged, embedded, derived } = setup();
      const doc = randomUUID();
      await service.indexDocument(tenant, await embedded(doc, 1));
      await service.setPrincipals(tenant, doc, ['g:eng']);
      await service.setAttributes(tenant, doc, { knowledgeBaseIds: [], tags: ['x'], metadata: {} });
      await embedded(doc, 2); // a version still in the pipeline

      await service.onDocumentEvent(tenant, { kind: 'deleted', documentId: doc });
      expect(derived(doc)).toEqual([]);
      expect(await state.principalsOf(tenant, doc)).toBeUndefined();
      expect(await state.attributesOf(tenant, doc)).toBeUndefined();
      expect(await state.indexStates(own, [doc])).toEqual(new Map([[doc, { deleted: true }]]));
      expect(purged).toEqual([tenant]);

      // A late ACL change does not bring the rows back; late embeddings are removed on refusal.
      await service.onDocumentEvent(tenant, {
        kind: 'acl_changed',
        documentId: doc,
        principals: ['u:bob'],
      });
      expect(await state.principalsOf(tenant, doc)).toBeUndefined();
      const late = await embedded(doc, 3);
      expect(derived(doc)).toHaveLength(1);
      await service.indexDocument(tenant, late);
      expect(derived(doc)).toEqual([]);
    });

    it('removes what it wrote when the delete lands between its tombstone check and its writes', async () => {
      const { service, vectors, embedded, statuses, held, derived } = setup();
      const doc = randomUUID();
      const event = await embedded(doc, 1, { space: other });
      // The delete is handled after the check, before the chunks are in: it finds nothing yet.
      vectors.beforeUpsert = () =>
        service.onDocumentEvent(tenant, { kind: 'deleted', documentId: doc });
      await service.indexDocument(tenant, event);
      expect(await held(other, doc)).toEqual({ vectors: [], lexical: [] });
      expect(await held(own, doc)).toEqual({ vectors: [], lexical: [] });
      expect(derived(doc)).toEqual([]);
      expect(statuses(doc).map((s) => s.status)).toEqual(['indexing']); // never `indexed`
    });
  });

  describe('bulk removal (documents_removed, ADR 24)', () => {
    const removedEvent = (documentIds: string[]) => ({
      kind: 'documents_removed' as const,
      documentIds,
      knowledgeBaseId: 'kb1',
      cause: 'emptied' as const,
      jobId: randomUUID(),
      batch: 0,
      batches: 1,
    });

    it('removes a batch of documents from every space like single deletes, and keeps them out', async () => {
      const { service, removal, state, generations, purged, embedded, held, derived } = setup();
      const [a, b, kept] = [randomUUID(), randomUUID(), randomUUID()];
      const spaces = [own, other];
      for (const doc of [a, b, kept]) {
        await service.indexDocument(tenant, await embedded(doc, 1, { versionSpaces: spaces }));
      }
      await service.indexDocument(
        tenant,
        await embedded(b, 1, { space: other, versionSpaces: spaces }),
      );
      await service.setPrincipals(tenant, a, ['g:eng']);
      await embedded(a, 2); // a version still in the pipeline
      const before = await generations.current(tenant);

      await service.onDocumentEvent(tenant, removedEvent([a, b]));
      for (const doc of [a, b]) {
        expect(await held(own, doc)).toEqual({ vectors: [], lexical: [] });
        expect(await held(other, doc)).toEqual({ vectors: [], lexical: [] });
        expect(await state.spacesOf(tenant, doc)).toEqual([own]);
        expect(await state.isTombstoned(tenant, doc)).toBe(true);
      }
      expect(await state.principalsOf(tenant, a)).toBeUndefined();
      expect(await held(own, kept)).toEqual({ vectors: [1], lexical: [1] });
      // The derived objects are queued, then removed off the partition (DerivedCleanupTask).
      expect(derived(a)).not.toEqual([]);
      expect(await new DerivedCleanupTask(removal).drain()).toBe(2);
      expect(await new DerivedCleanupTask(removal).drain()).toBe(0);
      for (const doc of [a, b]) expect(derived(doc)).toEqual([]);
      expect(derived(kept)).toHaveLength(1);
      expect(await generations.current(tenant)).toBe(before + 1); // one bump for the batch
      expect(purged).toEqual([tenant]); // one purge for the batch

      // A redelivery removes nothing more; a late version or ACL change stays out.
      expect(await removal.removeDocuments(tenant, [a, b])).toMatchObject({
        vectors: 0,
        lexical: 0,
      });
      await service.indexDocument(tenant, await embedded(a, 3));
      await service.onDocumentEvent(tenant, { kind: 'acl_changed', documentId: b, principals: [] });
      expect(await held(own, a)).toEqual({ vectors: [], lexical: [] });
      expect(await state.principalsOf(tenant, b)).toBeUndefined();
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

    it('replaces a version with a newer one, removing the older chunks and derived objects', async () => {
      const { service, embedded, statuses, held, derived, blobs, vectors, lexical } = setup();
      const doc = randomUUID();
      const listings = jest.spyOn(blobs, 'list');
      const removals = [
        jest.spyOn(vectors, 'deleteDocument'),
        jest.spyOn(lexical, 'deleteDocument'),
      ];
      await service.indexDocument(tenant, await embedded(doc, 1, { chunks: 3 }));
      // A first version has nothing older to look for, in the blobs or in the indexes.
      expect(listings).not.toHaveBeenCalled();
      for (const removal of removals) expect(removal).not.toHaveBeenCalled();
      await service.indexDocument(tenant, await embedded(doc, 2, { chunks: 1 }));
      expect(listings).toHaveBeenCalledWith(`derived/${tenant}/${doc}/`);
      for (const removal of removals) expect(removal).toHaveBeenCalledWith(own, doc, 2);
      expect(await held(own, doc)).toEqual({ vectors: [2], lexical: [2] });
      expect(statuses(doc).at(-1)).toEqual({ version: 2, status: 'indexed', chunkCount: 1 });
      expect(derived(doc)).toEqual([`derived/${tenant}/${doc}/v2/embeddings.${own}.json`]);
    });

    it('keeps the older version’s derived objects until every pipeline holds the new one', async () => {
      const { service, embedded, derived } = setup();
      const doc = randomUUID();
      const versionSpaces = [own, other];
      await service.indexDocument(tenant, await embedded(doc, 1, { versionSpaces }));
      await service.indexDocument(tenant, await embedded(doc, 1, { space: other, versionSpaces }));
      await service.indexDocument(tenant, await embedded(doc, 2, { versionSpaces }));
      expect(derived(doc).filter((key) => key.includes('/v1/'))).toHaveLength(2);
      await service.indexDocument(tenant, await embedded(doc, 2, { space: other, versionSpaces }));
      expect(derived(doc).every((key) => key.includes('/v2/'))).toBe(true);
      expect(derived(doc)).toHaveLength(2);
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

    it('hands the store the recorded principals with an attribute edit, never leaving it to read them', async () => {
      const { service, vectors, embedded } = setup();
      const doc = randomUUID();
      await service.indexDocument(tenant, await embedded(doc, 1));
      await service.setPrincipals(tenant, doc, ['g:eng']);
      const setAttributes = jest.spyOn(vectors, 'setAttributes');
      const edit = { knowledgeBaseIds: [], tags: ['final'], metadata: {} };
      await service.setAttributes(tenant, doc, edit);
      expect(setAttributes).toHaveBeenCalledWith(own, doc, edit, ['g:eng']);
    });

    it('keeps an ACL change that lands while an attribute edit rewrites whole records (M8)', async () => {
      const { service, vectors, embedded, visible } = setup();
      const doc = randomUUID();
      await service.indexDocument(tenant, await embedded(doc, 1));
      await service.setPrincipals(tenant, doc, ['g:eng']);
      vectors.wholeRecords = true;
      // A snapshot repair (or an acl_changed) records and writes a newer ACL after the edit read
      // the recorded one, and before its rewrite lands.
      vectors.betweenReadAndWrite = async () => {
        await service.setPrincipals(tenant, doc, ['g:ops']);
      };
      await service.setAttributes(tenant, doc, {
        knowledgeBaseIds: ['kb1'],
        tags: ['final'],
        metadata: {},
      });
      expect(await visible(own, ['g:eng'])).toEqual({ vectors: 0, lexical: 0 });
      expect(await visible(own, ['g:ops'], { tags: 'final' })).toEqual({ vectors: 2, lexical: 2 });
    });

    it("gives a late edit while indexing the recorded principals, never a lagging read's (M8)", async () => {
      const { service, vectors, embedded, visible } = setup();
      const doc = randomUUID();
      await service.indexDocument(tenant, await embedded(doc, 1));
      vectors.wholeRecords = true;
      // From here on, reads answer from when u:ann could read the document.
      vectors.lagging = true;
      await service.setPrincipals(tenant, doc, ['g:eng']);
      const setAttributes = jest.spyOn(vectors, 'setAttributes');
      const edit = { knowledgeBaseIds: ['kb1'], tags: ['final'], metadata: {} };
      // Version 2 read the attributes before this edit arrived: its late-edit path applies it.
      vectors.beforeUpsert = async () => {
        await service.onDocumentEvent(tenant, {
          kind: 'attributes_changed',
          documentId: doc,
          attributes: edit,
          spaces: [own],
        });
      };
      await service.indexDocument(tenant, await embedded(doc, 2));
      expect(setAttributes).toHaveBeenLastCalledWith(own, doc, edit, ['g:eng']);
      expect(await visible(own, ['u:ann'])).toEqual({ vectors: 0, lexical: 0 });
      expect(await visible(own, ['g:eng'], { tags: 'final' })).toEqual({ vectors: 2, lexical: 2 });
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

  describe('ACL changes racing a first indexing into a pipeline space (review M1)', () => {
    it('gives the new space the ACL and attributes changed while its chunks were written', async () => {
      const { service, vectors, embedded, visible, held } = setup();
      const doc = randomUUID();
      await service.indexDocument(tenant, await embedded(doc, 1));
      const first = await embedded(doc, 1, { space: other });
      // Handled after the service read the ACL, before the pipeline space holds any chunk.
      vectors.beforeUpsert = async () => {
        await service.onDocumentEvent(tenant, {
          kind: 'acl_changed',
          documentId: doc,
          principals: ['u:bob'],
          metaVersion: 1,
        });
        await service.onDocumentEvent(tenant, {
          kind: 'attributes_changed',
          documentId: doc,
          attributes: { knowledgeBaseIds: ['kb1'], tags: ['final'], metadata: {} },
          spaces: [own, other],
          metaVersion: 2,
        });
      };
      await service.indexDocument(tenant, first);
      expect(await held(other, doc)).toEqual({ vectors: [1], lexical: [1] });
      for (const space of [own, other]) {
        expect(await visible(space, ['u:ann'])).toEqual({ vectors: 0, lexical: 0 });
        expect(await visible(space, ['u:bob'], { tags: 'final' })).toEqual({
          vectors: 2,
          lexical: 2,
        });
      }
    });
  });

  describe('meta versions (review M2)', () => {
    it('ignores an ACL change older than the one applied, in every space', async () => {
      const { service, embedded, visible } = setup();
      const doc = randomUUID();
      await service.indexDocument(tenant, await embedded(doc, 1));
      const change = (principals: string[], metaVersion: number) =>
        service.onDocumentEvent(tenant, {
          kind: 'acl_changed',
          documentId: doc,
          principals,
          metaVersion,
        });
      // Widened (v1), then narrowed (v2); another outbox replica published v1 last.
      await change(['u:ann'], 2);
      await change(['u:ann', 't:*'], 1);
      expect(await visible(own, ['t:*'])).toEqual({ vectors: 0, lexical: 0 });
      expect(await visible(own, ['u:ann'])).toEqual({ vectors: 2, lexical: 2 });
      // A replay of the newest, and an event from before versions, still apply.
      await change(['u:ann'], 2);
      await service.onDocumentEvent(tenant, {
        kind: 'acl_changed',
        documentId: doc,
        principals: ['u:cy'],
      });
      expect(await visible(own, ['u:cy'])).toEqual({ vectors: 2, lexical: 2 });
    });

    it('ignores a stale attribute change, and does not leave the spaces it names', async () => {
      const { service, embedded, held, visible } = setup();
      const doc = randomUUID();
      await service.indexDocument(tenant, await embedded(doc, 1));
      await service.indexDocument(tenant, await embedded(doc, 1, { space: other }));
      const edit = (tags: string[], spaces: IndexSpace[], metaVersion: number) =>
        service.onDocumentEvent(tenant, {
          kind: 'attributes_changed',
          documentId: doc,
          attributes: { knowledgeBaseIds: ['kb1'], tags, metadata: {} },
          spaces,
          metaVersion,
        });
      await edit(['final'], [own, other], 3);
      await edit(['draft'], [own], 2);
      expect(await held(other, doc)).toEqual({ vectors: [1], lexical: [1] });
      expect(await visible(other, ['u:ann'], { tags: 'final' })).toEqual({
        vectors: 2,
        lexical: 2,
      });
    });

    it('ignores an ACL change that arrives after the delete', async () => {
      const { service, state, embedded, held } = setup();
      const doc = randomUUID();
      await service.indexDocument(tenant, await embedded(doc, 1));
      await service.onDocumentEvent(tenant, { kind: 'deleted', documentId: doc, metaVersion: 3 });
      await service.onDocumentEvent(tenant, {
        kind: 'acl_changed',
        documentId: doc,
        principals: ['t:*'],
        metaVersion: 2,
      });
      expect(await held(own, doc)).toEqual({ vectors: [], lexical: [] });
      expect(await state.principalsOf(tenant, doc)).toBeUndefined();
    });
  });

  describe('access reconciliation (review H2)', () => {
    it('repairs an ACL narrowed while the vector store was down, once it is back', async () => {
      const { service, access, vectors, embedded, visible } = setup();
      const doc = randomUUID();
      const kept = randomUUID();
      await service.indexDocument(tenant, await embedded(doc, 1));
      await service.indexDocument(tenant, await embedded(kept, 1));
      await service.onDocumentEvent(tenant, {
        kind: 'acl_changed',
        documentId: doc,
        principals: ['u:ann', 'u:eve'],
        metaVersion: 1,
      });

      // Narrowed while the store is down: every attempt fails (the event ends dead-lettered).
      vectors.down = true;
      const narrow = {
        kind: 'acl_changed' as const,
        documentId: doc,
        principals: ['u:ann'],
        metaVersion: 2,
      };
      for (let attempt = 0; attempt < 5; attempt++) {
        await expect(service.onDocumentEvent(tenant, narrow)).rejects.toThrow('ECONNREFUSED');
      }
      expect((await visible(own, ['u:eve'])).vectors).toBeGreaterThan(0);

      // Back: the next pass of document-service's snapshot repairs it, and only it.
      vectors.down = false;
      const snapshot = {
        documents: [
          { documentId: doc, principals: ['u:ann'], metaVersion: 2 },
          { documentId: kept, principals: ['u:ann'], metaVersion: 0 },
        ],
      };
      expect(await access.reconcile(tenant, snapshot)).toEqual([doc]);
      expect(await visible(own, ['u:eve'])).toEqual({ vectors: 0, lexical: 0 });
      expect(await visible(own, ['u:ann'])).toEqual({ vectors: 4, lexical: 4 });
      // Converged: the next pass finds nothing to repair.
      expect(await access.reconcile(tenant, snapshot)).toEqual([]);
    });

    it('applies a change that never reached indexing, and leaves deleted documents alone', async () => {
      const { service, access, embedded, visible, held } = setup();
      const [lost, deleted] = [randomUUID(), randomUUID()];
      await service.indexDocument(tenant, await embedded(lost, 1));
      await service.indexDocument(tenant, await embedded(deleted, 1));
      await service.deleteDocument(tenant, deleted);
      expect(
        await access.reconcile(tenant, {
          documents: [
            { documentId: lost, principals: ['g:eng'], metaVersion: 4 },
            { documentId: deleted, principals: ['t:*'], metaVersion: 4 },
          ],
        }),
      ).toEqual([lost]);
      expect(await visible(own, ['u:ann'])).toEqual({ vectors: 0, lexical: 0 });
      expect(await visible(own, ['g:eng'])).toEqual({ vectors: 2, lexical: 2 });
      expect(await held(own, deleted)).toEqual({ vectors: [], lexical: [] });
    });
  });
});

describe('needsRepair', () => {
  const truth = { documentId: randomUUID(), principals: ['u:ann', 'g:eng'], metaVersion: 3 };
  it.each([
    ['never changed, and the truth never moved', undefined, 0, false],
    ['never recorded, but the truth moved', undefined, 3, true],
    ['the same, applied', { principals: ['g:eng', 'u:ann'], version: 3, applied: true }, 3, false],
    [
      'the same at an older version',
      { principals: ['g:eng', 'u:ann'], version: 1, applied: true },
      3,
      false,
    ],
    [
      'the same, not applied',
      { principals: ['u:ann', 'g:eng'], version: 3, applied: false },
      3,
      true,
    ],
    ['different', { principals: ['u:ann'], version: 2, applied: true }, 3, true],
    ['newer than the snapshot', { principals: ['u:ann'], version: 4, applied: false }, 3, false],
  ])('%s', (_name, recorded, metaVersion, expected) => {
    expect(needsRepair({ ...truth, metaVersion }, recorded)).toBe(expected);
  });
});
