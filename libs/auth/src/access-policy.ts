import { type Access, AccessResolver, AccessUnavailableError } from './access';
import { AuthError, AuthErrorCode } from './auth.errors';
import type { Action, Caller } from './caller';

/** An action on a kind of resource in the caller's tenant, e.g. `{ action: 'admin', resource: 'acl' }`. */
export interface Permission {
  action: Action;
  resource: string;
}

/**
 * Where a service learns what a verified caller may do: the port behind `@Authenticated()`
 * (libs/http). Failures are `AuthError`s: unavailable (fail closed), unauthenticated, or
 * permission denied.
 */
export interface AccessPolicy {
  /** The caller's principals and document actions. */
  accessOf(caller: Caller): Promise<Access>;
  /** Resolves when the caller holds `permission` in their tenant; rejects with permission_denied otherwise. */
  authorize(caller: Caller, permission: Permission): Promise<void>;
}

/**
 * The access policy of the services that ask acl-service (through `AccessResolver` and its cache).
 * Only document actions travel in an expansion, so other resources are granted to tenant admins
 * alone, as the built-in policy does.
 */
export class ResolverAccessPolicy implements AccessPolicy {
  constructor(private readonly resolver: AccessResolver) {}

  async accessOf(caller: Caller): Promise<Access> {
    try {
      return await this.resolver.resolve(caller);
    } catch (error) {
      if (error instanceof AccessUnavailableError) {
        throw new AuthError(AuthErrorCode.Unavailable, 'authorization is unavailable, retry later');
      }
      throw error;
    }
  }

  async authorize(caller: Caller, { action, resource }: Permission): Promise<void> {
    const access = await this.accessOf(caller);
    const granted = resource === 'documents' ? access.documentActions.has(action) : access.isAdmin;
    if (!granted) {
      throw new AuthError(
        AuthErrorCode.PermissionDenied,
        `${action} on ${resource} is not granted to ${caller.userId}`,
      );
    }
  }
}
