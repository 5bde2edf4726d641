import { ResolverAccessPolicy, type Access, type AccessResolver, type Caller } from '@kb/auth';

/**
 * @deprecated Use `@Authenticated({ access: true })` and `@CurrentAccess()` on the handler. Kept
 * for document-service until it adopts them: the caller's access from acl-service; its outage is
 * a 503 (fail closed), never an allow; a token it refuses is a 401.
 */
export function accessOf(resolver: AccessResolver, caller: Caller): Promise<Access> {
  return new ResolverAccessPolicy(resolver).accessOf(caller);
}
