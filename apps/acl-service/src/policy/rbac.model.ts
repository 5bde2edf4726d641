import { type Model, newModelFromString } from 'casbin';

/**
 * RBAC with domains (domain = tenant). Subjects are principal strings (`u:alice`, `g:eng`,
 * `r:editor`, `t:*`); `g(member, role-or-group, tenant)` links them, transitively. A policy line
 * `p(subject, tenant or *, resource or *, action or *)` allows. Built-in policies apply to every
 * tenant (domain `*`); tenant admins add their own.
 */
export const MODEL_TEXT = `
[request_definition]
r = sub, dom, obj, act

[policy_definition]
p = sub, dom, obj, act

[role_definition]
g = _, _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = g(r.sub, p.sub, r.dom) && (p.dom == r.dom || p.dom == "*") && (p.obj == r.obj || p.obj == "*") && (p.act == r.act || p.act == "*")
`;

export const newModel = (): Model => newModelFromString(MODEL_TEXT);

/**
 * Permissions every tenant starts with: members read (document ACLs then decide what they see),
 * editors also write and delete, admins do everything (including this API).
 */
export const BUILT_IN_POLICIES: string[][] = [
  ['t:*', '*', 'documents', 'read'],
  ['r:editor', '*', 'documents', 'write'],
  ['r:editor', '*', 'documents', 'delete'],
  ['r:admin', '*', '*', '*'],
];

export const RESOURCES = ['documents', 'acl', 'audit'] as const;
