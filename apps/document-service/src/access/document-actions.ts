import { type Access, type Action, AuthError, AuthErrorCode } from '@kb/auth';

import { type DocumentAcl, granteePrincipals } from '../documents/document.model';

/**
 * The one permission check of document-service's services: the caller holds `action` on
 * documents, else 403 `permission_denied` with the message `@Authenticated` gives for the same
 * refusal. Knowledge bases, collections and sources are guarded by the document actions too.
 */
export function requireDocumentAction(access: Access, action: Action): void {
  if (!access.documentActions.has(action)) {
    throw new AuthError(
      AuthErrorCode.PermissionDenied,
      `${action} on documents is not granted to ${access.userId}`,
    );
  }
}

/**
 * `requireDocumentAction` for one document: the tenant-wide role, or the document's own grant of
 * `write` (`acl.writers`) or `delete` (`acl.deleters`) to one of the caller's principals
 * (docs/adr/0054). An ending grant is its grant principal, which the caller holds until the end.
 */
export function requireDocumentActionOn(
  access: Access,
  action: 'write' | 'delete',
  document: { acl: DocumentAcl },
): void {
  if (access.documentActions.has(action)) return;
  const granted = new Set(
    granteePrincipals(
      action === 'write' ? document.acl.writers : document.acl.deleters,
      document.acl.until,
    ),
  );
  if (access.principals.some((p) => granted.has(p))) return;
  requireDocumentAction(access, action);
}
