import {
  type ChunksEmbedded,
  type DocumentEvent,
  type EditableAttributes,
  embeddedChunksSchema,
  type IndexSpace,
  type TenantId,
  Topics,
} from '@kb/contracts';
import type { DocumentIndexState, IndexGenerations } from '@kb/index-state';
import { derivedPrefix, type EventProducer, keyOfTenant, spaceOfTenant } from '@kb/kafka';
import type { LexicalIndex } from '@kb/lexical-index';
import { meter, withSpan } from '@kb/observability';
import { type BlobStore, getJson } from '@kb/storage';
import type { VectorRecord, VectorStore } from '@kb/vector-store';
import { Inject, Injectable, Logger } from '@nestjs/common';

import {
  BLOB_STORE,
  EVENT_PRODUCER,
  GENERATIONS,
  INDEX_STATE,
  LEXICAL_INDEX,
  VECTOR_STORE,
} from '../platform/tokens';

const chunksIndexed = meter().createCounter('kb_chunks_indexed_total', {
  description: 'Chunks written to the vector store and the lexical index',
});
const documentsRemoved = meter().createCounter('kb_documents_removed_total', {
  description: 'Deleted documents removed from the indexes',
});

@Injectable()
export class IndexingService {
  private readonly logger = new Logger(IndexingService.name);
  private readonly readyDimensions = new Set<number>();

  constructor(
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(EVENT_PRODUCER) private readonly producer: Pick<EventProducer, 'publish'>,
    @Inject(VECTOR_STORE) private readonly vectors: VectorStore,
    @Inject(LEXICAL_INDEX) private readonly lexical: LexicalIndex,
    @Inject(GENERATIONS) private readonly generations: Pick<IndexGenerations, 'bump'>,
    @Inject(INDEX_STATE) private readonly state: DocumentIndexState,
  ) {}

  /**
   * Writes a version's vectors and lexical rows for the tenant, then removes older versions'.
   * Upserts by (document, version, chunk), so replaying the event leaves both indexes unchanged.
   */
  async indexDocument(tenantId: TenantId, embedded: ChunksEmbedded): Promise<void> {
    await withSpan(
      'kb.index',
      {
        'kb.tenant_id': tenantId,
        'kb.document_id': embedded.documentId,
        'kb.version': embedded.version,
      },
      () => this.indexInSpan(tenantId, embedded),
    );
  }

  private async indexInSpan(tenantId: TenantId, embedded: ChunksEmbedded): Promise<void> {
    const { documentId, version } = embedded;
    const { pipeline } = embedded;
    // The spaces written and the embeddings read must be this tenant's (a forged or buggy event
    // is dead-lettered before anything is read or written).
    const space = spaceOfTenant(tenantId, pipeline.space, 'indexing_error');
    const versionSpaces = pipeline.versionSpaces.map((s) =>
      spaceOfTenant(tenantId, s, 'indexing_error'),
    );
    keyOfTenant(embedded.embeddings.key, [derivedPrefix(tenantId)], 'indexing_error');
    if (await this.state.isTombstoned(tenantId, documentId)) {
      this.logger.log(
        `document ${documentId} was deleted; its v${version} embeddings are not indexed`,
      );
      return;
    }
    if (!(await this.state.claimVersion(space, documentId, version))) {
      this.logger.log(
        `document ${documentId} v${version} is older than the version indexed in ${space}; skipped`,
      );
      return;
    }
    await this.producer.publish({
      topic: Topics.documentStatus,
      tenantId,
      key: documentId,
      payload: { documentId, version, status: 'indexing' },
    });
    const document = embeddedChunksSchema.parse(await getJson(this.blobs, embedded.embeddings.key));
    await this.ensureReady(document.dimension);
    // An ACL changed while this version was in the pipeline wins over the upload's.
    const [changedAcl, edited] = await Promise.all([
      this.state.principalsOf(tenantId, documentId),
      this.state.attributesOf(tenantId, documentId),
    ]);
    const attributes = {
      ...embedded.attributes,
      ...(edited ?? {}),
      ...(changedAcl ? { principals: changedAcl } : {}),
    };
    const records: VectorRecord[] = document.chunks.map((chunk) => ({
      documentId,
      documentVersion: version,
      chunkIndex: chunk.index,
      vector: chunk.vector,
      title: document.title,
      text: chunk.text,
      startOffset: chunk.start,
      endOffset: chunk.end,
      attributes,
    }));
    await Promise.all([
      this.vectors.upsert(space, records),
      // The lexical index also keeps where each chunk sits (page, headings): hits report it.
      this.lexical.upsert(
        space,
        records.map(({ vector: _vector, ...lexical }, i) => ({
          ...lexical,
          page: document.chunks[i]!.page,
          headingPath: document.chunks[i]!.headingPath,
        })),
      ),
    ]);
    const [removed] = await Promise.all([
      this.vectors.deleteDocument(space, documentId, version),
      this.lexical.deleteDocument(space, documentId, version),
    ]);
    const latestAcl = await this.state.principalsOf(tenantId, documentId);
    if (latestAcl && latestAcl.join() !== attributes.principals.join()) {
      await this.setPrincipals(tenantId, documentId, latestAcl); // changed during the writes
    }
    const held = await this.state.recordSpace(tenantId, documentId, space, version, records.length);
    await this.state.recordKnowledgeBaseSpace(
      tenantId,
      pipeline.knowledgeBaseIds,
      space,
      embedded.model,
    );
    // After the writes: any result cached from now on carries the new generation.
    await this.generations.bump(tenantId);
    chunksIndexed.add(records.length);
    const waiting = versionSpaces.filter((s) => !held.has(s));
    if (waiting.length > 0) {
      this.logger.log(
        `indexed document ${documentId} v${version} in ${space}: ${records.length} vectors; waiting for ${waiting.length} more pipeline(s)`,
      );
      return;
    }
    // Every pipeline of the version is in: the document is indexed (its first pipeline's count).
    await this.producer.publish({
      topic: Topics.documentStatus,
      tenantId,
      key: documentId,
      payload: {
        documentId,
        version,
        status: 'indexed',
        chunkCount: held.get(versionSpaces[0]!) ?? records.length,
      },
    });
    this.logger.log(
      `indexed document ${documentId} v${version} in ${space}: ${records.length} vectors, ${removed} old removed`,
    );
  }

  /**
   * Removes a deleted document from both indexes and leaves a tombstone first, so embeddings still
   * in flight cannot index it again. Replays remove nothing more.
   */
  async deleteDocument(
    tenantId: TenantId,
    documentId: string,
  ): Promise<{ vectors: number; lexical: number }> {
    await this.state.tombstone(tenantId, documentId);
    const spaces = await this.state.spacesOf(tenantId, documentId);
    const { vectors, lexical } = await this.inEverySpace(tenantId, documentId, (space) => [
      this.vectors.deleteDocument(space, documentId),
      this.lexical.deleteDocument(space, documentId),
    ]);
    // Forgotten only once every space is empty: a retried event still finds them all.
    for (const space of spaces) await this.state.forgetSpace(tenantId, documentId, space);
    await this.generations.bump(tenantId);
    documentsRemoved.add(1);
    this.logger.log(`deleted document ${documentId}: ${vectors} vectors, ${lexical} lexical rows`);
    return { vectors, lexical };
  }

  /** A document's lifecycle event: deletes, ACL and attribute changes reach the indexes. */
  async onDocumentEvent(tenantId: TenantId, event: DocumentEvent): Promise<void> {
    if (event.kind === 'deleted') {
      await this.deleteDocument(tenantId, event.documentId);
    } else if (event.kind === 'acl_changed') {
      await this.setPrincipals(tenantId, event.documentId, event.principals);
    } else if (event.kind === 'attributes_changed') {
      const { documentId, attributes, spaces } = event;
      const kept = spaces.map((s) => spaceOfTenant(tenantId, s, 'indexing_error'));
      await this.leaveSpaces(tenantId, documentId, kept);
      await this.setAttributes(tenantId, documentId, attributes);
    }
  }

  /**
   * Applies edited tags, metadata and knowledge bases to a document's chunks in both indexes, in
   * place (nothing is re-embedded), remembers them for versions still in the pipeline, and bumps
   * the generation. Idempotent.
   */
  async setAttributes(
    tenantId: TenantId,
    documentId: string,
    attributes: EditableAttributes,
  ): Promise<void> {
    await this.state.recordAttributes(tenantId, documentId, attributes);
    const { vectors, lexical } = await this.inEverySpace(tenantId, documentId, (space) => [
      this.vectors.setAttributes(space, documentId, attributes),
      this.lexical.setAttributes(space, documentId, attributes),
    ]);
    await this.generations.bump(tenantId);
    this.logger.log(
      `document ${documentId} attributes changed: ${vectors} vectors, ${lexical} lexical rows updated`,
    );
  }

  /**
   * Applies a document's new ACL to its chunks in both indexes, in place, then bumps the
   * generation so no cached result computed under the old ACL is served again. Idempotent.
   */
  async setPrincipals(tenantId: TenantId, documentId: string, principals: string[]): Promise<void> {
    await this.state.recordPrincipals(tenantId, documentId, principals);
    const { vectors, lexical } = await this.inEverySpace(tenantId, documentId, (space) => [
      this.vectors.setPrincipals(space, documentId, principals),
      this.lexical.setPrincipals(space, documentId, principals),
    ]);
    await this.generations.bump(tenantId);
    this.logger.log(
      `document ${documentId} readable by ${principals.join(' ')}: ${vectors} vectors, ${lexical} lexical rows updated`,
    );
  }

  /**
   * Runs a change on a document in every index space holding it (one per pipeline of its
   * knowledge bases); `change` returns the vector and lexical counts it touched in that space.
   */
  private async inEverySpace(
    tenantId: TenantId,
    documentId: string,
    change: (space: IndexSpace) => [Promise<number>, Promise<number>],
  ): Promise<{ vectors: number; lexical: number }> {
    const total = { vectors: 0, lexical: 0 };
    for (const space of await this.state.spacesOf(tenantId, documentId)) {
      const [vectors, lexical] = await Promise.all(change(space));
      total.vectors += vectors;
      total.lexical += lexical;
    }
    return total;
  }

  /**
   * Removes a document from the index spaces of pipelines it no longer has (it left every
   * knowledge base of that pipeline). Its own tenant space is left to `spaces` like any other.
   */
  private async leaveSpaces(
    tenantId: TenantId,
    documentId: string,
    keep: IndexSpace[],
  ): Promise<void> {
    for (const space of await this.state.spacesOf(tenantId, documentId)) {
      if (keep.includes(space)) continue;
      const [vectors] = await Promise.all([
        this.vectors.deleteDocument(space, documentId),
        this.lexical.deleteDocument(space, documentId),
      ]);
      await this.state.forgetSpace(tenantId, documentId, space);
      this.logger.log(`document ${documentId} left ${space}: ${vectors} vectors removed`);
    }
  }

  private async ensureReady(dimension: number): Promise<void> {
    if (!this.readyDimensions.has(dimension)) {
      await this.vectors.ensureReady(dimension);
      this.readyDimensions.add(dimension);
    }
  }
}
