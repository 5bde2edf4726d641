import type { TenantId } from '@kb/contracts';

/** Who is calling: verified from a bearer token at the edge, carried to every hop after it. */
export interface Caller {
  tenantId: TenantId;
  userId: string;
  /** Roles the token names; the acl-service adds those assigned in its policy. */
  roles: string[];
  groups: string[];
  /** The bearer token itself, forwarded on service-to-service calls. */
  token: string;
}

/**
 * Principal strings, as document ACLs and the indexes hold them. A document is readable by a
 * caller when the two sets share a principal; `t:*` stands for everyone in the tenant.
 */
export const principal = {
  user: (id: string): string => `u:${id}`,
  role: (name: string): string => `r:${name}`,
  group: (name: string): string => `g:${name}`,
  tenant: 't:*',
  /**
   * A time-bound grant to a user or group (`u:bob`, `g:eng`) on a document, as the indexes hold
   * it: `x:u:bob@2026-12-01T00:00:00.000Z`. acl-service links the member to it until that time,
   * so the caller's principals include it until then and not after (docs/adr/0054).
   */
  grant: (member: string, expiresAt: Date): string => `x:${member}@${expiresAt.toISOString()}`,
} as const;

/** The member and end of a `principal.grant`, or undefined for any other principal. */
export function parseGrantPrincipal(p: string): { member: string; expiresAt: Date } | undefined {
  const at = p.lastIndexOf('@');
  if (!p.startsWith('x:') || at < 0) return undefined;
  const member = p.slice(2, at);
  const expiresAt = new Date(p.slice(at + 1));
  if (!/^[ug]:./.test(member) || Number.isNaN(expiresAt.getTime())) return undefined;
  if (principal.grant(member, expiresAt) !== p) return undefined;
  return { member, expiresAt };
}

/** The role that administers a tenant: every permission, every document. */
export const ADMIN_ROLE = 'admin';

export type Action = 'read' | 'write' | 'delete' | 'admin';
export const ACTIONS: readonly Action[] = ['read', 'write', 'delete', 'admin'];
