import {
  type ChunksEmbedded,
  type DocumentEvent,
  type EditableAttributes,
  embeddedChunksSchema,
  eventKnowledgeBases,
  type TenantId,
  Topics,
} from '@kb/contracts';
import type { DocumentIndexState, IndexGenerations } from '@kb/index-state';
import { checkOut, claimOfTenant, type EventProducer, spaceOfTenant } from '@kb/kafka';
import type { LexicalIndex } from '@kb/lexical-index';
import { meter, withKnowledgeBase, withSpan } from '@kb/observability';
import type { BlobStore } from '@kb/storage';
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
import { DocumentRemovalService, type Removed } from '../removal/document-removal.service';
import { InPlaceChunkWriter, sameList } from './in-place-chunk.writer';

const chunksIndexed = meter().createCounter('kb_chunks_indexed_total', {
  description: 'Chunks written to the vector store and the lexical index, by knowledge base',
});

@Injectable()
export class IndexingService {
  private readonly logger = new Logger(IndexingService.name);
  private readonly readyDimensions = new Set<number>();
  /** ACL and attribute changes written into the chunks already indexed. */
  private readonly inPlace: InPlaceChunkWriter;

  constructor(
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(EVENT_PRODUCER) private readonly producer: Pick<EventProducer, 'publish'>,
    @Inject(VECTOR_STORE) private readonly vectors: VectorStore,
    @Inject(LEXICAL_INDEX) private readonly lexical: LexicalIndex,
    @Inject(GENERATIONS) private readonly generations: Pick<IndexGenerations, 'bump'>,
    @Inject(INDEX_STATE) private readonly state: DocumentIndexState,
    private readonly removal: DocumentRemovalService,
  ) {
    this.inPlace = new InPlaceChunkWriter(vectors, lexical, state, this.logger);
  }

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
    const claim = claimOfTenant(embedded.embeddings, tenantId, 'indexing_error');
    if (await this.state.isTombstoned(tenantId, documentId)) {
      // Parsed and embedded after the delete removed the document's derived objects: these go too.
      const late = await this.removal.removeLateDerived(tenantId, documentId);
      this.logger.log(
        `document ${documentId} was deleted; its v${version} embeddings are not indexed (${late} derived objects removed)`,
      );
      return;
    }
    if (!(await this.state.claimVersion(space, documentId, version))) {
      this.logger.log(
        `document ${documentId} v${version} is older than the version indexed in ${space}; skipped`,
      );
      return;
    }
    // Listed before its chunks are written: an ACL or attribute change handled from now on reaches
    // this space too, and one handled before is re-read below (review M1).
    await this.state.reserveSpace(tenantId, documentId, space);
    await this.producer.publish({
      topic: Topics.documentStatus,
      tenantId,
      key: documentId,
      payload: { documentId, version, status: 'indexing' },
    });
    const document = await checkOut(this.blobs, claim, embeddedChunksSchema);
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
    // Versions start at 1: a first version has no older chunks to remove (a DELETE in each
    // vector table, one in the lexical index and a catalog read saved per new document).
    const [removed] =
      version > 1
        ? await Promise.all([
            this.vectors.deleteDocument(space, documentId, version),
            this.lexical.deleteDocument(space, documentId, version),
          ])
        : [0];
    // Changed during the writes: the space is reserved, so writing the latest reaches it.
    const [latestAcl, latestEdit] = await Promise.all([
      this.state.principalsOf(tenantId, documentId),
      this.state.attributesOf(tenantId, documentId),
    ]);
    if (latestAcl && !sameList(latestAcl, attributes.principals)) {
      await this.inPlace.writePrincipals(tenantId, documentId, latestAcl);
    }
    if (latestEdit && JSON.stringify(latestEdit) !== JSON.stringify(edited)) {
      // With the ACL recorded, else the one just written: never what a store reads back (M8).
      await this.inPlace.writeAttributes(
        tenantId,
        documentId,
        latestEdit,
        latestAcl ?? attributes.principals,
      );
    }
    const held = await this.state.recordSpace(tenantId, documentId, space, version, records.length);
    // A delete that landed after the check above: its removal may have run before these writes
    // (and missed this space), so it is run again now. Checked after `recordSpace`: a delete
    // tombstoning after this check finds the space recorded and removes what was just written.
    if (await this.state.isTombstoned(tenantId, documentId)) {
      await this.removal.removeDocument(tenantId, documentId);
      this.logger.log(`document ${documentId} was deleted while v${version} was being indexed`);
      return;
    }
    await this.state.recordKnowledgeBaseSpace(
      tenantId,
      pipeline.knowledgeBaseIds,
      space,
      embedded.model,
    );
    // After the writes: any result cached from now on carries the new generation.
    await this.generations.bump(tenantId);
    chunksIndexed.add(records.length, withKnowledgeBase({}, eventKnowledgeBases(embedded)));
    const waiting = versionSpaces.filter((s) => !held.has(s));
    if (waiting.length > 0) {
      this.logger.log(
        `indexed document ${documentId} v${version} in ${space}: ${records.length} vectors; waiting for ${waiting.length} more pipeline(s)`,
      );
      return;
    }
    // Every pipeline of the version is in: the document is indexed (its first pipeline's count),
    // and older versions' parsed chunks and embeddings are of no more use.
    await this.removal.removeOlderVersions(tenantId, documentId, version);
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

  /** Removes a deleted document: chunks, derived objects, bookkeeping, cached results. */
  async deleteDocument(tenantId: TenantId, documentId: string): Promise<Removed> {
    return this.removal.removeDocument(tenantId, documentId);
  }

  /**
   * A document's lifecycle event: deletes, ACL and attribute changes reach the indexes. A change
   * older than the one applied (its meta version, ADR 18), or to a deleted document, is ignored:
   * outbox replicas can publish a document's events out of order (review M2).
   */
  async onDocumentEvent(
    tenantId: TenantId,
    event: Exclude<DocumentEvent, { kind: 'access_snapshot' }>,
  ): Promise<void> {
    if (event.kind === 'deleted') {
      await this.deleteDocument(tenantId, event.documentId);
    } else if (event.kind === 'documents_removed') {
      await this.removal.removeDocuments(tenantId, event.documentIds, event.knowledgeBaseId);
    } else if (event.kind === 'uploaded') {
      return; // the pipeline's business: indexing waits for its embeddings
    } else if (await this.state.isTombstoned(tenantId, event.documentId)) {
      // A late ACL or attribute change of a deleted document would keep its rows alive again.
      this.logger.log(`document ${event.documentId} was deleted; its ${event.kind} is ignored`);
    } else if (event.kind === 'acl_changed') {
      await this.setPrincipals(tenantId, event.documentId, event.principals, event.metaVersion);
    } else if (event.kind === 'attributes_changed') {
      const { documentId, attributes, spaces, metaVersion } = event;
      const kept = spaces.map((s) => spaceOfTenant(tenantId, s, 'indexing_error'));
      // A stale event's spaces are stale too: it must not make the document leave any.
      if (await this.setAttributes(tenantId, documentId, attributes, metaVersion)) {
        await this.inPlace.leaveSpaces(tenantId, documentId, kept);
      }
    }
  }

  /**
   * Applies edited tags, metadata and knowledge bases to a document's chunks in both indexes, in
   * place (nothing is re-embedded), remembers them for versions still in the pipeline, and bumps
   * the generation. Idempotent; false when meta `version` is older than the attributes recorded.
   */
  async setAttributes(
    tenantId: TenantId,
    documentId: string,
    attributes: EditableAttributes,
    version?: number,
  ): Promise<boolean> {
    if (!(await this.state.recordAttributes(tenantId, documentId, attributes, version))) {
      this.logger.log(`document ${documentId}: attributes v${version} are stale; ignored`);
      return false;
    }
    // Pinecone rewrites whole records: it writes these, never principals it read back (M8).
    const principals = await this.state.principalsOf(tenantId, documentId);
    const { vectors, lexical } = await this.inPlace.writeAttributes(
      tenantId,
      documentId,
      attributes,
      principals,
    );
    await this.generations.bump(tenantId);
    this.logger.log(
      `document ${documentId} attributes changed: ${vectors} vectors, ${lexical} lexical rows updated`,
    );
    return true;
  }

  /**
   * Applies a document's new ACL (at meta `version`; undefined from events before versions) to
   * its chunks in both indexes, in place, marks it applied, then bumps the generation so no cached
   * result computed under the old ACL is served again. Idempotent; false when `version` is older
   * than the ACL recorded (nothing is written).
   */
  async setPrincipals(
    tenantId: TenantId,
    documentId: string,
    principals: string[],
    version?: number,
  ): Promise<boolean> {
    if (!(await this.state.recordPrincipals(tenantId, documentId, principals, version))) {
      this.logger.log(`document ${documentId}: ACL v${version} is stale; ignored`);
      return false;
    }
    const { vectors, lexical } = await this.inPlace.writePrincipals(
      tenantId,
      documentId,
      principals,
    );
    // Only now: a write that failed in either index leaves it unapplied for reconciliation.
    await this.state.markPrincipalsApplied(tenantId, documentId, version);
    await this.generations.bump(tenantId);
    this.logger.log(
      `document ${documentId} readable by ${principals.join(' ')}: ${vectors} vectors, ${lexical} lexical rows updated`,
    );
    return true;
  }

  private async ensureReady(dimension: number): Promise<void> {
    if (!this.readyDimensions.has(dimension)) {
      await this.vectors.ensureReady(dimension);
      this.readyDimensions.add(dimension);
    }
  }
}
