import type { TenantId } from '@kb/contracts';

import type { DocumentsRepository, Visibility } from '../documents/documents.repository';
import { type HeldSkip, heldSkipOf } from '../holds/legal-hold.model';
import type { HeldDocuments } from '../holds/legal-holds.repository';
import type { Trx } from '../platform/transaction.runner';
import { KnowledgeBaseError, KnowledgeBaseErrorCode } from './knowledge-bases.errors';

/**
 * What the bulk deletes of a knowledge base ask the legal holds (docs/adr/0052), in their
 * transaction.
 */

/** A knowledge base a legal hold names cannot be deleted: the hold would lose its subject. */
export async function refuseHeldKnowledgeBase(
  holds: HeldDocuments,
  trx: Trx,
  tenantId: TenantId,
  id: string,
): Promise<void> {
  const hold = (await holds.activeHolds(trx, tenantId)).find(
    (h) => h.scope === 'knowledge_base' && h.knowledgeBaseId === id,
  );
  if (hold) {
    throw new KnowledgeBaseError(
      KnowledgeBaseErrorCode.LegalHold,
      `knowledge base ${id} is under legal hold "${hold.name}" and cannot be deleted until the hold is released`,
    );
  }
}

/** The members of `id` that `visibility` may read and a legal hold covers, by hold name. */
export async function heldMembers(
  documents: Pick<DocumentsRepository, 'lockMembers'>,
  holds: HeldDocuments,
  trx: Trx,
  tenantId: TenantId,
  id: string,
  visibility: Visibility,
): Promise<Map<string, string>> {
  const members = await documents.lockMembers(trx, tenantId, id, visibility);
  return holds.heldAmong(
    trx,
    tenantId,
    members.map((d) => d.id),
  );
}

/** `{ held }` of a result when a hold kept anything, else nothing. */
export const heldField = (held: Map<string, string>): { held?: HeldSkip } => {
  const skip = heldSkipOf(held);
  return skip ? { held: skip } : {};
};
