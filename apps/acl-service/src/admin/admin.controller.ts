import type { Caller, Permission } from '@kb/auth';
import { ApiOperation, Authenticated, CurrentCaller, parseBody, pathParameter } from '@kb/http';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { z } from 'zod';

import { PolicyService } from '../policy/policy.service';
import { RESOURCES } from '../policy/rbac.model';

/** What every route here needs: tenant administration of the ACL. */
const ADMINISTER_ACL: Permission = { action: 'admin', resource: 'acl' };

const name = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/,
    'letters, digits, "_", ".", "@" or "-", at most 128',
  );
const member = z
  .string()
  .regex(/^[ug]:[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/, 'a member is "u:<user>" or "g:<group>"');
/** When a grant ends (ADR 54): an ISO time in the future; without it the grant is permanent. */
const expiresAt = z.iso
  .datetime({ offset: true })
  .refine((at) => Date.parse(at) > Date.now(), 'must be in the future')
  .optional()
  .describe('ISO time the grant ends; omit for a grant that does not end');
const roleAssignmentSchema = z.object({ member, role: name });
const expiringRoleAssignmentSchema = roleAssignmentSchema.extend({ expiresAt });
const groupMemberSchema = z.object({ user: name, expiresAt });
const permissionsSchema = z.object({
  permissions: z
    .array(
      z.object({
        resource: z.enum([...RESOURCES, '*']),
        action: z.enum(['read', 'write', 'delete', 'admin', '*']),
      }),
    )
    .max(64),
});

/** What every policy change answers: the tenant's policy version after it. */
const versionSchema = z.object({ version: z.number().int() });

const policySchema = z.object({
  /** `[subject, resource, action]` rows of the tenant's own roles. */
  permissions: z.array(z.array(z.string())),
  /** `[member, role or group]` rows. */
  memberships: z.array(z.array(z.string())),
  /** The memberships that end, and when (ADR 54). */
  ends: z.array(z.object({ member: z.string(), target: z.string(), expiresAt: z.string() })),
  /** The built-in roles' rows, the same in every tenant. */
  builtIn: z.array(z.array(z.string())),
  version: z.number().int(),
});

const pathName = (param: string, description: string) => pathParameter(param, name, description);

/**
 * The tenant's access-control administration: roles' permissions, role assignments and group
 * membership. Every route needs the `admin` action on `acl` in the caller's own tenant; others
 * get 403.
 */
@Controller('v1/acl')
export class AdminController {
  constructor(private readonly policy: PolicyService) {}

  @Get('policy')
  @ApiOperation({
    operationId: 'describePolicy',
    summary: 'The tenant\u2019s permissions, memberships and policy version',
    response: policySchema,
    errors: [403],
  })
  @Authenticated({ permission: ADMINISTER_ACL, rateLimit: 'admin' })
  describe(@CurrentCaller() caller: Caller) {
    return this.policy.describe(caller.tenantId);
  }

  @Post('role-assignments')
  @ApiOperation({
    operationId: 'assignRole',
    summary: 'Give a user (`u:<id>`) or a group (`g:<id>`) a role, until `expiresAt` if given',
    body: expiringRoleAssignmentSchema,
    response: versionSchema,
    errors: [403, 413],
  })
  @Authenticated({ permission: ADMINISTER_ACL, rateLimit: 'admin' })
  @HttpCode(200)
  async assign(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    const { member, role, expiresAt } = parseBody(expiringRoleAssignmentSchema, body);
    return {
      version: await this.policy.change(caller, {
        kind: 'role_assigned',
        member,
        target: `r:${role}`,
        ...(expiresAt ? { expiresAt } : {}),
      }),
    };
  }

  @Delete('role-assignments')
  @ApiOperation({
    operationId: 'unassignRole',
    summary: 'Take a role from a user or a group',
    body: roleAssignmentSchema,
    response: versionSchema,
    errors: [403, 413],
  })
  @Authenticated({ permission: ADMINISTER_ACL, rateLimit: 'admin' })
  async unassign(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    const { member, role } = parseBody(roleAssignmentSchema, body);
    return {
      version: await this.policy.change(caller, {
        kind: 'role_unassigned',
        member,
        target: `r:${role}`,
      }),
    };
  }

  @Post('groups/:group/members')
  @ApiOperation({
    operationId: 'addGroupMember',
    summary: 'Add a user to a group, until `expiresAt` if given',
    parameters: [pathName('group', 'The group id.')],
    body: groupMemberSchema,
    response: versionSchema,
    errors: [403, 413],
  })
  @Authenticated({ permission: ADMINISTER_ACL, rateLimit: 'admin' })
  @HttpCode(200)
  async addMember(
    @CurrentCaller() caller: Caller,
    @Param('group') group: string,
    @Body() body: unknown,
  ) {
    const { user, expiresAt } = parseBody(groupMemberSchema, body);
    return {
      version: await this.policy.change(caller, {
        kind: 'group_member_added',
        member: `u:${user}`,
        target: `g:${parseBody(name, group)}`,
        ...(expiresAt ? { expiresAt } : {}),
      }),
    };
  }

  @Delete('groups/:group/members/:user')
  @ApiOperation({
    operationId: 'removeGroupMember',
    summary: 'Remove a user from a group',
    parameters: [pathName('group', 'The group id.'), pathName('user', 'The user id.')],
    response: versionSchema,
    errors: [403],
  })
  @Authenticated({ permission: ADMINISTER_ACL, rateLimit: 'admin' })
  async removeMember(
    @CurrentCaller() caller: Caller,
    @Param('group') group: string,
    @Param('user') user: string,
  ) {
    return {
      version: await this.policy.change(caller, {
        kind: 'group_member_removed',
        member: `u:${parseBody(name, user)}`,
        target: `g:${parseBody(name, group)}`,
      }),
    };
  }

  @Put('roles/:role/permissions')
  @ApiOperation({
    operationId: 'setRolePermissions',
    summary: 'Replace a role\u2019s permissions (resource and action pairs)',
    parameters: [pathName('role', 'The role id.')],
    body: permissionsSchema,
    response: versionSchema,
    errors: [403, 413],
  })
  @Authenticated({ permission: ADMINISTER_ACL, rateLimit: 'admin' })
  async setPermissions(
    @CurrentCaller() caller: Caller,
    @Param('role') role: string,
    @Body() body: unknown,
  ) {
    const { permissions } = parseBody(permissionsSchema, body);
    return {
      version: await this.policy.change(caller, {
        kind: 'role_permissions_set',
        target: `r:${parseBody(name, role)}`,
        permissions,
      }),
    };
  }
}
