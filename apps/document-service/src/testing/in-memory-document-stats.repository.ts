import type { TenantId } from '@kb/contracts';

import type { DocumentRecord } from '../documents/document.model';
import type { Visibility } from '../documents/documents.repository';
import {
  DocumentStatsRepository,
  type KnowledgeBaseStatusCount,
  type StatusCount,
  type ValueCount,
} from '../stats/document-stats.repository';
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

  async countInKnowledgeBases(
    tenantId: TenantId,
    visibility: Visibility,
    knowledgeBaseIds: string[],
  ): Promise<KnowledgeBaseStatusCount[]> {
    const groups = new Map<string, KnowledgeBaseStatusCount>();
    for (const document of this.visible(tenantId, visibility)) {
      for (const knowledgeBaseId of document.knowledgeBaseIds) {
        if (!knowledgeBaseIds.includes(knowledgeBaseId)) continue;
        const key = `${knowledgeBaseId}\u0000${document.status}`;
        const group = groups.get(key) ?? {
          knowledgeBaseId,
          status: document.status,
          documents: 0,
          chunks: 0,
          bytes: 0,
          lastIndexedAt: null,
        };
        group.bytes += document.sizeBytes;
        const indexed = document.stageTimes['indexed'];
        if (indexed && (!group.lastIndexedAt || indexed > group.lastIndexedAt)) {
          group.lastIndexedAt = new Date(indexed).toISOString();
        }
        groups.set(key, tally(group, document));
      }
    }
    return [...groups.values()];
  }

  async valuesOf(
    tenantId: TenantId,
    visibility: Visibility,
    knowledgeBaseId: string,
    field: { kind: 'tags' } | { kind: 'metadata'; key: string },
    limit: number,
  ): Promise<ValueCount[]> {
    const counts = new Map<string, ValueCount>();
    for (const document of this.visible(tenantId, visibility)) {
      if (!document.knowledgeBaseIds.includes(knowledgeBaseId)) continue;
      const held = field.kind === 'tags' ? document.tags : document.metadata[field.key];
      if (held === undefined) continue;
      for (const value of new Set(Array.isArray(held) ? held : [held])) {
        const key = JSON.stringify(value);
        const entry = counts.get(key) ?? { value, count: 0 };
        entry.count += 1;
        counts.set(key, entry);
      }
    }
    const rank = (v: ValueCount['value']) =>
      typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : 2;
    return [...counts.values()]
      .sort((a, b) =>
        rank(a.value) !== rank(b.value)
          ? rank(a.value) - rank(b.value)
          : a.value < b.value
            ? -1
            : a.value > b.value
              ? 1
              : 0,
      )
      .slice(0, limit);
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
