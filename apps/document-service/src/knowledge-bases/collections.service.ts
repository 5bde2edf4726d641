import type { Access } from '@kb/auth';
import { DOCUMENT_STATUSES, type DocumentStatus, type TenantId } from '@kb/contracts';
import { Injectable } from '@nestjs/common';

import { DocumentAudit } from '../documents/document-audit';
import { type Visibility, visibilityOf } from '../documents/documents.repository';
import {
  DocumentStatsRepository,
  type KnowledgeBaseStatusCount,
  type ValueCount,
} from '../stats/document-stats.repository';
import { decodeKnowledgeBaseCursor, encodeKnowledgeBaseCursor } from './collections.cursor';
import type {
  KnowledgeBasePage,
  KnowledgeBaseStats,
  ListKnowledgeBasesQuery,
} from './knowledge-base.model';
import {
  type DeleteKnowledgeBaseResult,
  type EmptyResult,
  KnowledgeBaseBulkDelete,
} from './knowledge-base-bulk-delete';
import { KnowledgeBasesRepository, requireKnowledgeBase } from './knowledge-bases.repository';

export type { DeleteKnowledgeBaseResult, EmptyResult };

export interface MetadataValues {
  knowledgeBaseId: string;
  field: string;
  values: ValueCount[];
  /** True when there were more distinct values than `limit`. */
  truncated: boolean;
}

/** A knowledge base's state from the counts of its documents (docs/adr/0024). */
export function statsOf(
  rows: KnowledgeBaseStatusCount[],
  scope: KnowledgeBaseStats['scope'],
): KnowledgeBaseStats {
  const byStatus = Object.fromEntries(DOCUMENT_STATUSES.map((s) => [s, 0])) as Record<
    DocumentStatus,
    number
  >;
  let chunkCount = 0;
  let bytes = 0;
  let lastIndexedAt: string | null = null;
  for (const row of rows) {
    byStatus[row.status] += row.documents;
    chunkCount += row.chunks;
    bytes += row.bytes;
    if (row.lastIndexedAt && (!lastIndexedAt || row.lastIndexedAt > lastIndexedAt)) {
      lastIndexedAt = row.lastIndexedAt;
    }
  }
  const inFlight = byStatus.pending + byStatus.parsing + byStatus.embedding + byStatus.indexing;
  return {
    status: inFlight > 0 ? 'indexing' : byStatus.failed > 0 ? 'error' : 'active',
    documentCount: Object.values(byStatus).reduce((a, b) => a + b, 0),
    documentsByStatus: byStatus,
    chunkCount,
    bytes,
    lastIndexedAt,
    scope,
  };
}

/**
 * Knowledge bases as collections (docs/adr/0024): their state and counts, the values their
 * documents' metadata takes; emptying and deleting are `KnowledgeBaseBulkDelete`'s. Every count
 * and value covers only the documents the caller may read, so none reveals a document they cannot.
 */
@Injectable()
export class CollectionsService {
  constructor(
    private readonly knowledgeBases: KnowledgeBasesRepository,
    private readonly counts: DocumentStatsRepository,
    private readonly audit: DocumentAudit,
    private readonly bulkDelete: KnowledgeBaseBulkDelete,
  ) {}

  /** A page of knowledge bases (by id), with `total` and each one's stats unless `stats=false`. */
  async list(
    tenantId: TenantId,
    access: Access,
    query: ListKnowledgeBasesQuery,
  ): Promise<KnowledgeBasePage> {
    const afterId = query.cursor ? decodeKnowledgeBaseCursor(query.cursor) : undefined;
    const { items, total } = await this.knowledgeBases.page(tenantId, {
      limit: query.limit + 1,
      afterId,
      offset: query.offset,
      name: query.name,
    });
    const page = items.slice(0, query.limit);
    const last = page[page.length - 1];
    const nextCursor =
      items.length > query.limit && last && query.offset === undefined
        ? encodeKnowledgeBaseCursor(last.id)
        : null;
    if (query.stats === 'false') return { items: page, total, nextCursor };
    const visibility = visibilityOf(access);
    const rows = await this.counts.countInKnowledgeBases(
      tenantId,
      visibility,
      page.map((kb) => kb.id),
    );
    // Counts over the documents the caller reads are a read of them (review L5).
    await this.audit.read('documents_listed', access, [], {
      read: 'knowledge_base_stats',
      knowledgeBaseIds: page.map((kb) => kb.id),
    });
    return {
      items: page.map((kb) => ({
        ...kb,
        stats: statsOf(
          rows.filter((row) => row.knowledgeBaseId === kb.id),
          scopeOf(visibility),
        ),
      })),
      total,
      nextCursor,
    };
  }

  async stats(tenantId: TenantId, access: Access, id: string): Promise<KnowledgeBaseStats> {
    await requireKnowledgeBase(this.knowledgeBases, tenantId, id);
    const visibility = visibilityOf(access);
    const rows = await this.counts.countInKnowledgeBases(tenantId, visibility, [id]);
    await this.audit.read('documents_listed', access, [], {
      read: 'knowledge_base_stats',
      knowledgeBaseId: id,
    });
    return statsOf(rows, scopeOf(visibility));
  }

  /** The distinct values of `field` (`metadata.<key>`, `<key>` or `tags`) with their counts. */
  async metadataValues(
    tenantId: TenantId,
    access: Access,
    id: string,
    field: { kind: 'tags' } | { kind: 'metadata'; key: string },
    limit: number,
  ): Promise<MetadataValues> {
    await requireKnowledgeBase(this.knowledgeBases, tenantId, id);
    const values = await this.counts.valuesOf(tenantId, visibilityOf(access), id, field, limit + 1);
    const name = field.kind === 'tags' ? 'tags' : `metadata.${field.key}`;
    await this.audit.read('documents_listed', access, [], {
      read: 'metadata_values',
      knowledgeBaseId: id,
      field: name,
      limit,
    });
    return {
      knowledgeBaseId: id,
      field: name,
      values: values.slice(0, limit),
      truncated: values.length > limit,
    };
  }

  /** See `KnowledgeBaseBulkDelete.empty`. */
  empty(tenantId: TenantId, access: Access, id: string): Promise<EmptyResult> {
    return this.bulkDelete.empty(tenantId, access, id);
  }

  /** See `KnowledgeBaseBulkDelete.delete`. */
  delete(
    tenantId: TenantId,
    access: Access,
    id: string,
    cascade: boolean,
  ): Promise<DeleteKnowledgeBaseResult> {
    return this.bulkDelete.delete(tenantId, access, id, cascade);
  }
}

const scopeOf = (visibility: Visibility): KnowledgeBaseStats['scope'] =>
  visibility === 'all' ? 'all' : 'readable';
