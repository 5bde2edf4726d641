import type { TenantId } from '@kb/contracts';
import { Topics } from '@kb/contracts';

import { attachmentsPrefix } from '../attachments/attachments.repository';
import type { OutboxWriter } from '../outbox/outbox.writer';
import type { Trx } from '../platform/transaction.runner';
import { type DocumentAcl, type DocumentRecord, principalsOf } from './document.model';
import { aclAuditOf, aclChangedEventOf } from './document-events.builder';
import type { DocumentsRepository } from './documents.repository';

/**
 * Stores a document's new ACL in the caller's transaction: its principals (`principalsOf`),
 * `acl_changed` for the indexes and the `document_acl_changed` audit record by `actor`. The one
 * path of every ACL change: the owner's `PUT …/acl` and the ended-grant job (actor `system`).
 * A mail's attachment documents (docs/adr/0048) take the same ACL in the same transaction, each
 * with its own event and audit record: whoever loses the mail loses what was attached to it.
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
  // An attachment made after this commits copies the new ACL (attachment-intake.ts locks the
  // mail first); one made before is listed here.
  const attached = await deps.documents.listByExternalIdPrefix(
    tenantId,
    attachmentsPrefix(id),
    'all',
    trx,
  );
  for (const attachment of attached) {
    await applyAcl(deps, trx, { ...change, id: attachment.id });
  }
  return changed;
}
