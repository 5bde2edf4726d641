import type { TenantId } from '@kb/contracts';
import type { DocumentIndexState, IndexGenerations } from '@kb/index-state';
import type { LeaseQueue } from '@kb/jobs';
import { derivedPrefix } from '@kb/kafka';
import type { LexicalIndex } from '@kb/lexical-index';
import { meter, withKnowledgeBase } from '@kb/observability';
import { type BlobStore, deleteUnder } from '@kb/storage';
import type { VectorStore } from '@kb/vector-store';
import { Inject, Injectable, Logger } from '@nestjs/common';

import {
  BLOB_STORE,
  GENERATIONS,
  INDEX_STATE,
  LEXICAL_INDEX,
  SEARCH_CACHE_PURGER,
  VECTOR_STORE,
} from '../platform/tokens';
import type { SearchCachePurger } from './search-cache.purger';

const documentsRemoved = meter().createCounter('kb_documents_removed_total', {
  description:
    'Deleted documents removed from the indexes (by knowledge base when emptied with it)',
});
const derivedRemoved = meter().createCounter('kb_derived_objects_removed_total', {
  description: 'Parsed chunks and embeddings removed from S3, by cause (deleted or superseded)',
});

/**
 * Where the parser's chunks and the embedder's vectors of a document live in S3: one folder per
 * version, `derived/<tenant>/<document>/v<n>/` (chunks.<chunker>.json, embeddings.<model>.json).
 */
export const derivedDocumentPrefix = (tenantId: TenantId, documentId: string): string =>
  `${derivedPrefix(tenantId)}${documentId}/`;

/** The version a derived object belongs to, from its key; undefined for a key of another shape. */
export function derivedVersionOf(prefix: string, key: string): number | undefined {
  const match = key.startsWith(prefix) ? /^v(\d+)\//.exec(key.slice(prefix.length)) : null;
  return match ? Number(match[1]) : undefined;
}

/** A document removed in bulk whose derived objects still wait for their clean-up. */
export interface QueuedDerived {
  tenantId: TenantId;
  documentId: string;
}

export interface Removed {
  vectors: number;
  lexical: number;
  derived: number;
  cached: number;
}

/**
 * What deleting a document removes on the index side (docs/adr/0019): its chunks in every index
 * space, its parsed chunks and embeddings in S3 (every version), the bookkeeping kept for it but
 * its tombstone, and the tenant's cached search results. The tombstone goes first, so a version
 * still in the pipeline is refused from then on, and indexing checks it again after its writes.
 * Every step is idempotent: a retried or replayed `deleted` event removes nothing more.
 */
@Injectable()
export class DocumentRemovalService {
  private readonly logger = new Logger(DocumentRemovalService.name);

  constructor(
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(VECTOR_STORE)
    private readonly vectors: Pick<VectorStore, 'deleteDocument' | 'deleteDocuments'>,
    @Inject(LEXICAL_INDEX)
    private readonly lexical: Pick<LexicalIndex, 'deleteDocument' | 'deleteDocuments'>,
    @Inject(GENERATIONS) private readonly generations: Pick<IndexGenerations, 'bump'>,
    @Inject(INDEX_STATE)
    private readonly state: Pick<
      DocumentIndexState,
      | 'tombstone'
      | 'spacesOf'
      | 'forgetDocument'
      | 'tombstoneMany'
      | 'spacesOfMany'
      | 'forgetDocuments'
      | 'queueDerivedCleanup'
      | 'claimDerivedCleanup'
      | 'derivedCleanupDone'
    >,
    @Inject(SEARCH_CACHE_PURGER) private readonly cache: SearchCachePurger,
  ) {}

  async removeDocument(tenantId: TenantId, documentId: string): Promise<Removed> {
    await this.state.tombstone(tenantId, documentId);
    const spaces = await this.state.spacesOf(tenantId, documentId);
    const removed: Removed = { vectors: 0, lexical: 0, derived: 0, cached: 0 };
    for (const space of spaces) {
      const [vectors, lexical] = await Promise.all([
        this.vectors.deleteDocument(space, documentId),
        this.lexical.deleteDocument(space, documentId),
      ]);
      removed.vectors += vectors;
      removed.lexical += lexical;
    }
    removed.derived = await this.removeDerived(tenantId, documentId, 'deleted');
    // Forgotten only once every space is empty: a retried event still finds them all.
    await this.state.forgetDocument(tenantId, documentId, spaces);
    // After the removals: cached results computed before carry an older generation, and go.
    await this.generations.bump(tenantId);
    removed.cached = await this.cache.purgeTenant(tenantId);
    documentsRemoved.add(1);
    this.logger.log(
      `deleted document ${documentId}: ${removed.vectors} vectors, ${removed.lexical} lexical rows, ${removed.derived} derived objects, ${removed.cached} cached results`,
    );
    return removed;
  }

  /**
   * What `removeDocument` does, for a batch of documents (`documents_removed`, ≤ 1,000 ids, from
   * emptying or cascade-deleting a knowledge base; docs/adr/0024), set-based: one tombstone
   * INSERT, one DELETE per index and space for the whole batch, one forget, one generation bump
   * and one cache purge. The derived objects are the only per-document step (S3 lists by
   * prefix), run a few documents at a time. Same order and idempotence as a single delete: the
   * tombstones go first, the bookkeeping is forgotten only once every space is empty.
   * `knowledgeBaseId`, the one emptied or deleted, labels the count (a single delete's event
   * names none, so `removeDocument` counts unlabelled).
   */
  async removeDocuments(
    tenantId: TenantId,
    documentIds: string[],
    knowledgeBaseId?: string,
  ): Promise<Removed> {
    const ids = [...new Set(documentIds)];
    const removed: Removed = { vectors: 0, lexical: 0, derived: 0, cached: 0 };
    if (ids.length === 0) return removed;
    const started = performance.now();
    const lap = (since: number) => Math.round(performance.now() - since);
    await this.state.tombstoneMany(tenantId, ids);
    const bySpace = await this.state.spacesOfMany(tenantId, ids);
    const indexesStarted = performance.now();
    for (const [space, held] of bySpace) {
      const [vectors, lexical] = await Promise.all([
        this.vectors.deleteDocuments(space, held),
        this.lexical.deleteDocuments(space, held),
      ]);
      removed.vectors += vectors;
      removed.lexical += lexical;
    }
    const indexesMs = lap(indexesStarted);
    // Listing 1,000 prefixes in S3 takes seconds: queued (same transaction of intent as the
    // tombstones) and removed by `removeQueuedDerived` off the partition (DerivedCleanupTask).
    await this.state.queueDerivedCleanup(tenantId, ids);
    await this.state.forgetDocuments(tenantId, ids, [...bySpace.keys()]);
    await this.generations.bump(tenantId);
    const purgeStarted = performance.now();
    removed.cached = await this.cache.purgeTenant(tenantId);
    const purgeMs = lap(purgeStarted);
    documentsRemoved.add(
      ids.length,
      knowledgeBaseId === undefined ? {} : withKnowledgeBase({}, knowledgeBaseId),
    );
    this.logger.log(
      `removed ${ids.length} documents at once in ${lap(started)} ms (indexes ${indexesMs} ms, cache ${purgeMs} ms): ${removed.vectors} vectors, ${removed.lexical} lexical rows, ${removed.cached} cached results; derived objects queued`,
    );
    return removed;
  }

  /**
   * The documents `removeDocuments` queued, as a lease queue (docs/adr/0049): `DerivedCleanupTask`
   * drains it off the partitions.
   */
  readonly derivedQueue: LeaseQueue<QueuedDerived> = {
    claim: (limit, leaseMs) => this.state.claimDerivedCleanup(limit, leaseMs),
  };

  /**
   * Removes a queued document's derived objects and takes it off the queue; answers how many
   * objects. A failure leaves it queued: its lease runs out and it is taken again.
   */
  async removeQueuedDerived({ tenantId, documentId }: QueuedDerived): Promise<number> {
    const objects = await this.removeDerived(tenantId, documentId, 'deleted');
    await this.state.derivedCleanupDone(tenantId, [documentId]);
    return objects;
  }

  /**
   * The parsed chunks and embeddings of a deleted document written after its removal (a version
   * that was still being parsed or embedded), found when its `chunks embedded` event is refused.
   */
  async removeLateDerived(tenantId: TenantId, documentId: string): Promise<number> {
    return this.removeDerived(tenantId, documentId, 'deleted');
  }

  /**
   * The parsed chunks and embeddings of versions older than `version`, once every pipeline holds
   * `version`: nothing reads them again (an older version's event is refused by its claim).
   */
  async removeOlderVersions(
    tenantId: TenantId,
    documentId: string,
    version: number,
  ): Promise<number> {
    // A first version has none older: no listing (one S3 request per new document).
    if (version <= 1) return 0;
    return this.removeDerived(tenantId, documentId, 'superseded', version);
  }

  private async removeDerived(
    tenantId: TenantId,
    documentId: string,
    cause: 'deleted' | 'superseded',
    before?: number,
  ): Promise<number> {
    const prefix = derivedDocumentPrefix(tenantId, documentId);
    const count = await deleteUnder(this.blobs, prefix, (key) => {
      if (before === undefined) return true;
      const version = derivedVersionOf(prefix, key);
      return version !== undefined && version < before;
    });
    derivedRemoved.add(count, { cause });
    return count;
  }
}
