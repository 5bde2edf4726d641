import type { TenantId } from '@kb/contracts';
import { Topics } from '@kb/contracts';

import type { OutboxWriter } from '../outbox/outbox.writer';
import type { Trx } from '../platform/transaction.runner';
import { type DocumentAcl, type DocumentRecord, principalsOf } from './document.model';
import { aclAuditOf, aclChangedEventOf } from './document-events.builder';
import type { DocumentsRepository } from './documents.repository';

/**
 * Stores a document's new ACL in the caller's transaction: its principals (`principalsOf`),
 * `acl_changed` for the indexes and the `document_acl_changed` audit record by `actor`. The one
 * path of every ACL change: the owner's `PUT …/acl` and the ended-grant job (actor `system`).
 * Undefined when the document is gone.
 */
export async function applyAcl(
  deps: { documents: DocumentsRepository; events: OutboxWriter },
  trx: Trx,
  change: { tenantId: TenantId; id: string; acl: DocumentAcl; actor: string; now: Date },
): Promise<DocumentRecord | undefined> {
  const { tenantId, id, acl, actor, now } = change;
  const current = await deps.documents.lockForUpdate(trx, tenantId, id);
  if (!current) return undefined;
  const principals = principalsOf(current.ownerId, acl);
  const changed = await deps.documents.setAcl(trx, tenantId, id, acl, principals, now);
  await deps.events.enqueue(trx, Topics.document, tenantId, id, aclChangedEventOf(changed));
  await deps.events.enqueue(
    trx,
    Topics.audit,
    tenantId,
    id,
    aclAuditOf(actor, id, acl, principals, now),
  );
  return changed;
}
