import { principal } from '@kb/auth';
import { z } from 'zod';

const principalName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/,
    'letters, digits, "_", ".", "@" or "-", at most 128',
  );

/** Users and groups one action on one document is granted to (docs/adr/0054). */
const granteesSchema = z.object({
  users: z.array(principalName).max(256).default([]),
  groups: z.array(principalName).max(256).default([]),
});
export type Grantees = z.infer<typeof granteesSchema>;

/**
 * When a user's (`u:<id>`) or group's (`g:<id>`) entries in the ACL end (docs/adr/0054): as
 * reader, writer and deleter alike. Entries without an end are permanent.
 */
const grantEndsSchema = z
  .record(
    z.string().regex(/^[ug]:[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/, '"u:<user>" or "g:<group>"'),
    z.iso.datetime({ offset: true }),
  )
  .refine((ends) => Object.keys(ends).length <= 256, 'at most 256 ends');

/**
 * Who may read a document besides its owner: users, groups, roles, or everyone in the tenant;
 * and who may change (`writers`: edit, new content) or delete it beside the tenant-wide roles. A
 * writer or deleter also reads it. `until` gives entries an end.
 */
export const documentAclSchema = z
  .object({
    users: z.array(principalName).max(256).default([]),
    groups: z.array(principalName).max(256).default([]),
    roles: z.array(principalName).max(64).default([]),
    /** Everyone in the tenant. */
    tenant: z.boolean().default(false),
    writers: granteesSchema.optional(),
    deleters: granteesSchema.optional(),
    until: grantEndsSchema.optional(),
  })
  .refine((acl) => Object.keys(acl.until ?? {}).every((p) => namedIn(acl, p)), {
    message: 'each key of until must name a user or group of the ACL',
    path: ['until'],
  });
export type DocumentAcl = z.infer<typeof documentAclSchema>;

/** Whether the ACL lists `u:<id>` or `g:<id>` as reader, writer or deleter. */
function namedIn(
  acl: { users: string[]; groups: string[]; writers?: Grantees; deleters?: Grantees },
  p: string,
): boolean {
  const name = p.slice(2);
  const lists = [acl, acl.writers, acl.deleters];
  return lists.some((l) => (p.startsWith('u:') ? l?.users : l?.groups)?.includes(name) ?? false);
}

/**
 * A user's or group's principal as the document grants it: itself, or the grant principal that
 * acl-service honours only until the entry's end (`principal.grant`, docs/adr/0054).
 */
const granted =
  (until: DocumentAcl['until']) =>
  (p: string): string => {
    const end = until?.[p];
    return end ? principal.grant(p, new Date(end)) : p;
  };

/** The principals of a per-document grant (ending ones as grant principals). */
export const granteePrincipals = (
  grantees: Grantees | undefined,
  until?: DocumentAcl['until'],
): string[] =>
  [
    ...(grantees?.users ?? []).map(principal.user),
    ...(grantees?.groups ?? []).map(principal.group),
  ].map(granted(until));

/** The principals a document grants read access to: its owner and its ACL's entries. */
export function principalsOf(ownerId: string, acl: DocumentAcl): string[] {
  return [
    ...new Set([
      ...(ownerId ? [principal.user(ownerId)] : []),
      ...granteePrincipals(acl, acl.until),
      ...acl.roles.map(principal.role),
      ...(acl.tenant ? [principal.tenant] : []),
      ...granteePrincipals(acl.writers, acl.until),
      ...granteePrincipals(acl.deleters, acl.until),
    ]),
  ].sort();
}
