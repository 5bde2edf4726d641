import { type Access, type Action, AuthError, AuthErrorCode } from '@kb/auth';

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
