import type { DocumentStatus, FailureReason } from '@kb/contracts';

/** A document as the API shows it. */
export interface DocumentView {
  id: string;
  tenantId: string;
  title: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  version: number;
  status: DocumentStatus;
  failure: { reason: FailureReason; detail: string | null } | null;
  chunkCount: number | null;
  metadata: Record<string, unknown>;
  /** When each pipeline status was reached for the current version. */
  stageTimes: Partial<Record<DocumentStatus, string>>;
  createdAt: string;
  updatedAt: string;
}

/** Pipeline order; a status event moves a document forward only, so replays and reordering are harmless. */
export const STATUS_RANK: Record<DocumentStatus, number> = {
  pending: 0,
  parsing: 1,
  embedding: 2,
  indexing: 3,
  indexed: 4,
  failed: 5,
};

export function isFinal(status: DocumentStatus): boolean {
  return status === 'indexed' || status === 'failed';
}
