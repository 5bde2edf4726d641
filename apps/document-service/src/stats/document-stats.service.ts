import type { Access } from '@kb/auth';
import { DOCUMENT_STATUSES, type DocumentStatus, type TenantId } from '@kb/contracts';
import { Injectable } from '@nestjs/common';

import { DocumentAudit } from '../documents/document-audit';
import { visibilityOf } from '../documents/documents.repository';
import { KnowledgeBasesRepository } from '../knowledge-bases/knowledge-bases.repository';
import { DocumentStatsRepository, type StatusCount } from './document-stats.repository';

/** Documents and their chunks, in total and per status. */
export interface Counts {
  documents: number;
  chunks: number;
  byStatus: Record<DocumentStatus, { documents: number; chunks: number }>;
}

export interface DocumentStats {
  /** `readable`: only documents the caller may read are counted; `all` for a tenant admin. */
  scope: 'readable' | 'all';
  /** Every document counted once, whatever its knowledge bases. */
  totals: Counts;
  /** Every knowledge base of the tenant (names are tenant-wide), with the counted documents in it. */
  knowledgeBases: Array<{ id: string; name: string } & Counts>;
}

const emptyCounts = (): Counts => ({
  documents: 0,
  chunks: 0,
  byStatus: Object.fromEntries(
    DOCUMENT_STATUSES.map((status) => [status, { documents: 0, chunks: 0 }]),
  ) as Counts['byStatus'],
});

function add(counts: Counts, row: Omit<StatusCount, 'knowledgeBaseId'>): Counts {
  counts.documents += row.documents;
  counts.chunks += row.chunks;
  counts.byStatus[row.status].documents += row.documents;
  counts.byStatus[row.status].chunks += row.chunks;
  return counts;
}

/**
 * `GET /v1/stats`: what an agent's `kb_stats` shows. Knowledge bases are tenant-level, as in
 * `GET /v1/knowledge-bases`; the counts cover the documents the caller may read, so they never
 * reveal what the caller cannot see. Audited as a `documents_listed` record (`read: stats`).
 */
@Injectable()
export class DocumentStatsService {
  constructor(
    private readonly counts: DocumentStatsRepository,
    private readonly knowledgeBases: KnowledgeBasesRepository,
    private readonly audit: DocumentAudit,
  ) {}

  async stats(tenantId: TenantId, access: Access): Promise<DocumentStats> {
    const visibility = visibilityOf(access);
    const [byKnowledgeBase, byStatus, knowledgeBases] = await Promise.all([
      this.counts.countByKnowledgeBase(tenantId, visibility),
      this.counts.countByStatus(tenantId, visibility),
      this.knowledgeBases.list(tenantId),
    ]);
    const perBase = new Map(
      knowledgeBases.map((kb) => [kb.id, { id: kb.id, name: kb.name, ...emptyCounts() }]),
    );
    for (const row of byKnowledgeBase) {
      // `default` exists without a row of its own until someone creates it.
      const entry = perBase.get(row.knowledgeBaseId) ?? {
        id: row.knowledgeBaseId,
        name: row.knowledgeBaseId,
        ...emptyCounts(),
      };
      perBase.set(row.knowledgeBaseId, entry);
      add(entry, row);
    }
    // Counts over the documents the caller reads are a read of them (review L5).
    await this.audit.read('documents_listed', access, [], { read: 'stats' });
    return {
      scope: visibility === 'all' ? 'all' : 'readable',
      totals: byStatus.reduce(add, emptyCounts()),
      knowledgeBases: [...perBase.values()].sort((a, b) => a.id.localeCompare(b.id)),
    };
  }
}
