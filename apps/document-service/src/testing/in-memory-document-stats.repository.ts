import type { TenantId } from '@kb/contracts';

import type { DocumentRecord } from '../documents/document.model';
import type { Visibility } from '../documents/documents.repository';
import { DocumentStatsRepository, type StatusCount } from '../stats/document-stats.repository';
import type { InMemoryDatabase } from './in-memory.database';

type Count = Omit<StatusCount, 'knowledgeBaseId'>;

/** `DocumentStatsRepository` over `InMemoryDatabase`, grouping as the SQL one does. */
export class InMemoryDocumentStatsRepository extends DocumentStatsRepository {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async countByKnowledgeBase(tenantId: TenantId, visibility: Visibility): Promise<StatusCount[]> {
    const groups = new Map<string, StatusCount>();
    for (const document of this.visible(tenantId, visibility)) {
      for (const knowledgeBaseId of document.knowledgeBaseIds) {
        const key = `${knowledgeBaseId}\u0000${document.status}`;
        const group = groups.get(key) ?? {
          knowledgeBaseId,
          status: document.status,
          documents: 0,
          chunks: 0,
        };
        groups.set(key, tally(group, document));
      }
    }
    return [...groups.values()];
  }

  async countByStatus(tenantId: TenantId, visibility: Visibility): Promise<Count[]> {
    const groups = new Map<string, Count>();
    for (const document of this.visible(tenantId, visibility)) {
      const group = groups.get(document.status) ?? {
        status: document.status,
        documents: 0,
        chunks: 0,
      };
      groups.set(document.status, tally(group, document));
    }
    return [...groups.values()];
  }

  private visible(tenantId: TenantId, visibility: Visibility): DocumentRecord[] {
    return [...this.db.documents.values()].filter(
      (d) =>
        d.tenantId === tenantId &&
        (visibility === 'all' || d.principals.some((p) => visibility.includes(p))),
    );
  }
}

function tally<C extends Count>(count: C, document: DocumentRecord): C {
  count.documents += 1;
  count.chunks += document.chunkCount ?? 0;
  return count;
}
