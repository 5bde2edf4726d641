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
} as const;

/** The role that administers a tenant: every permission, every document. */
export const ADMIN_ROLE = 'admin';

export type Action = 'read' | 'write' | 'delete' | 'admin';
export const ACTIONS: readonly Action[] = ['read', 'write', 'delete', 'admin'];
