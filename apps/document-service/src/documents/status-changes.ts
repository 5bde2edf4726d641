import type { DocumentStatus, FailureReason, PiiSummary, TenantId } from '@kb/contracts';

import { isFinal, STATUS_RANK } from './document.model';

export interface StatusChange {
  documentId: string;
  version: number;
  status: DocumentStatus;
  reason?: FailureReason;
  detail?: string;
  chunkCount?: number;
  /** PII the parser found in the version: recorded whatever the status (`piiFindingsOf`). */
  pii?: PiiSummary;
  at: Date;
}

/** A status change of one tenant's document, as a batch of status events carries them. */
export interface TenantStatusChange extends StatusChange {
  tenantId: TenantId;
}

/**
 * What a run of changes to one document version amounts to: the last one accepted, with the
 * time of every status accepted on the way (`stage_times` records each stage reached).
 */
export interface CollapsedStatusChange extends TenantStatusChange {
  stageTimes: Partial<Record<DocumentStatus, string>>;
}

/**
 * The PII findings a batch of changes carries, the last per document version: recorded on the
 * version whatever its status, since the parser sends them on a status it already reached.
 */
export function piiFindingsOf(
  changes: TenantStatusChange[],
): Array<Pick<TenantStatusChange, 'tenantId' | 'documentId' | 'version'> & { pii: PiiSummary }> {
  const byVersion = new Map<string, TenantStatusChange & { pii: PiiSummary }>();
  for (const change of changes) {
    if (!change.pii) continue;
    byVersion.set(JSON.stringify([change.tenantId, change.documentId, change.version]), {
      ...change,
      pii: change.pii,
    });
  }
  return [...byVersion.values()].map(({ tenantId, documentId, version, pii }) => ({
    tenantId,
    documentId,
    version,
    pii,
  }));
}

/** Where a status change left a document version it moved. */
export interface AppliedStatus {
  tenantId: TenantId;
  documentId: string;
  version: number;
  status: DocumentStatus;
}

/**
 * Folds changes, in arrival order, into one per document version, accepting each as applying
 * them one by one would: only a status ranked above the last accepted one, and nothing after a
 * final status. The store still compares each with the row (a stage already recorded there is
 * not recorded again), so applying the folded changes equals applying the originals in turn.
 */
export function collapseStatusChanges(changes: TenantStatusChange[]): CollapsedStatusChange[] {
  const byVersion = new Map<string, CollapsedStatusChange>();
  for (const change of changes) {
    const key = JSON.stringify([change.tenantId, change.documentId, change.version]);
    const accepted = byVersion.get(key);
    if (
      accepted &&
      (isFinal(accepted.status) || STATUS_RANK[change.status] <= STATUS_RANK[accepted.status])
    ) {
      continue;
    }
    byVersion.set(key, {
      ...change,
      chunkCount: change.chunkCount ?? accepted?.chunkCount,
      stageTimes: { ...accepted?.stageTimes, [change.status]: change.at.toISOString() },
    });
  }
  return [...byVersion.values()];
}
