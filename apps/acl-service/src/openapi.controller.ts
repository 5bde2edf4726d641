import { auditEventSchema } from '@kb/contracts';
import { buildOpenApiDocument, Public } from '@kb/http';
import { Controller, Get } from '@nestjs/common';
import { z } from 'zod';

import {
  groupMemberSchema,
  name,
  permissionsSchema,
  roleAssignmentSchema,
} from './admin/admin.controller';
import { auditQuerySchema } from './audit/audit.controller';

/** What every policy change answers: the tenant's policy version after it. */
const versionSchema = z.object({ version: z.number().int() });

const policySchema = z.object({
  /** `[subject, resource, action]` rows of the tenant's own roles. */
  permissions: z.array(z.array(z.string())),
  /** `[member, role or group]` rows. */
  memberships: z.array(z.array(z.string())),
  /** The built-in roles' rows, the same in every tenant. */
  builtIn: z.array(z.array(z.string())),
  version: z.number().int(),
});

const auditRecordSchema = auditEventSchema.extend({ id: z.string(), at: z.string() });

const pathName = (param: string, description: string) => ({
  name: param,
  in: 'path' as const,
  schema: name,
  description,
});

const queryParameters = Object.entries(auditQuerySchema.shape).map(([param, schema]) => ({
  name: param,
  in: 'query' as const,
  schema,
}));

/** The REST API's OpenAPI 3 document, generated from the schemas that validate requests. */
export const ACL_OPENAPI = buildOpenApiDocument(
  {
    title: 'Knowledge base access-control API',
    version: '1',
    description:
      'A tenant\u2019s roles, role assignments and groups (tenant admins only), and its audit log. Callers\u2019 principals are served over gRPC (kb.v1.Access).',
  },
  [
    {
      method: 'get',
      path: '/v1/acl/policy',
      operationId: 'describePolicy',
      summary: 'The tenant\u2019s permissions, memberships and policy version',
      status: 200,
      response: policySchema,
      errors: [403],
    },
    {
      method: 'post',
      path: '/v1/acl/role-assignments',
      operationId: 'assignRole',
      summary: 'Give a user (`u:<id>`) or a group (`g:<id>`) a role',
      body: roleAssignmentSchema,
      status: 200,
      response: versionSchema,
      errors: [403, 413],
    },
    {
      method: 'delete',
      path: '/v1/acl/role-assignments',
      operationId: 'unassignRole',
      summary: 'Take a role from a user or a group',
      body: roleAssignmentSchema,
      status: 200,
      response: versionSchema,
      errors: [403, 413],
    },
    {
      method: 'post',
      path: '/v1/acl/groups/{group}/members',
      operationId: 'addGroupMember',
      summary: 'Add a user to a group',
      parameters: [pathName('group', 'The group id.')],
      body: groupMemberSchema,
      status: 200,
      response: versionSchema,
      errors: [403, 413],
    },
    {
      method: 'delete',
      path: '/v1/acl/groups/{group}/members/{user}',
      operationId: 'removeGroupMember',
      summary: 'Remove a user from a group',
      parameters: [pathName('group', 'The group id.'), pathName('user', 'The user id.')],
      status: 200,
      response: versionSchema,
      errors: [403],
    },
    {
      method: 'put',
      path: '/v1/acl/roles/{role}/permissions',
      operationId: 'setRolePermissions',
      summary: 'Replace a role\u2019s permissions (resource and action pairs)',
      parameters: [pathName('role', 'The role id.')],
      body: permissionsSchema,
      status: 200,
      response: versionSchema,
      errors: [403, 413],
    },
    {
      method: 'get',
      path: '/v1/audit',
      operationId: 'queryAudit',
      summary: 'The tenant\u2019s audit log, newest first (callers with `read` on `audit`)',
      parameters: queryParameters,
      status: 200,
      response: z.object({ items: z.array(auditRecordSchema) }),
      errors: [403],
    },
  ],
);

@Public()
@Controller()
export class OpenApiController {
  @Get('openapi.json')
  document(): Record<string, unknown> {
    return ACL_OPENAPI;
  }
}
