import type { DocumentAccessSnapshot, TenantId } from '@kb/contracts';
import type { DocumentIndexState, RecordedAccess } from '@kb/index-state';
import { meter } from '@kb/observability';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { INDEX_STATE } from '../platform/tokens';
import { IndexingService } from './indexing.service';

const accessRepairs = meter().createCounter('kb_access_repairs_total', {
  description:
    'Documents whose readers in the indexes differed from document-service and were repaired',
});

type SnapshotEntry = DocumentAccessSnapshot['documents'][number];

/**
 * Whether what the indexes were given of a document's readers (`recorded`: absent when its ACL
 * never changed since upload) can differ from document-service's (`truth`):
 * - a newer ACL recorded than the snapshot's → no: the snapshot is older than a change applied;
 * - nothing recorded → only when the document's meta version moved (a change never arrived);
 * - otherwise when the recorded ACL differs, or was not applied to both indexes (a store failed).
 */
export function needsRepair(truth: SnapshotEntry, recorded: RecordedAccess | undefined): boolean {
  if (!recorded) return truth.metaVersion > 0;
  if (recorded.version > truth.metaVersion) return false;
  const same =
    recorded.principals.length === truth.principals.length &&
    [...recorded.principals].sort().join('\n') === [...truth.principals].sort().join('\n');
  return !same || !recorded.applied;
}

/**
 * The indexing half of access reconciliation (docs/adr/0018): document-service periodically sends
 * every document's readers (`access_snapshot`); each entry is compared with the ACL this service
 * recorded and marked applied to both indexes, and any difference is written again to every
 * index space holding the document.
 */
@Injectable()
export class AccessReconciliationService {
  private readonly logger = new Logger(AccessReconciliationService.name);

  constructor(
    private readonly indexing: IndexingService,
    @Inject(INDEX_STATE)
    private readonly state: Pick<DocumentIndexState, 'accessStates' | 'isTombstoned'>,
  ) {}

  /** Compares a snapshot of a tenant's documents and repairs; returns the ids repaired. */
  async reconcile(tenantId: TenantId, snapshot: DocumentAccessSnapshot): Promise<string[]> {
    const recorded = await this.state.accessStates(
      tenantId,
      snapshot.documents.map((entry) => entry.documentId),
    );
    const repaired: string[] = [];
    for (const entry of snapshot.documents) {
      if (!needsRepair(entry, recorded.get(entry.documentId))) continue;
      if (await this.state.isTombstoned(tenantId, entry.documentId)) continue;
      const { documentId, principals, metaVersion } = entry;
      if (await this.indexing.setPrincipals(tenantId, documentId, principals, metaVersion)) {
        repaired.push(documentId);
      }
    }
    accessRepairs.add(repaired.length);
    if (repaired.length > 0) {
      this.logger.warn(
        `access reconciliation: readers of ${repaired.length} documents repaired in the indexes (${repaired.join(', ')})`,
      );
    }
    return repaired;
  }
}
