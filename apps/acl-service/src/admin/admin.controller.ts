import type { Caller } from '@kb/auth';
import { ApiError, CurrentCaller, parseBody } from '@kb/http';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { z } from 'zod';
import { AuditRepository, type AuditRecord } from '../audit/audit.repository';
import { RESOURCES } from '../policy/model';
import { PolicyService } from '../policy/policy.service';

const name = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/,
    'letters, digits, "_", ".", "@" or "-", at most 128',
  );
const member = z
  .string()
  .regex(/^[ug]:[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/, 'a member is "u:<user>" or "g:<group>"');
const roleAssignmentSchema = z.object({ member, role: name });
const groupMemberSchema = z.object({ user: name });
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
const auditQuerySchema = z.object({
  user: z.string().max(256).optional(),
  document: z.string().max(64).optional(),
  action: z.string().max(64).optional(),
  from: z.iso.datetime().optional(),
  to: z.iso.datetime().optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/**
 * The tenant's access-control administration: roles' permissions, role assignments, group
 * membership, and the audit log. Every route needs the `admin` action on `acl` (or `read` on
 * `audit` for the log) in the caller's own tenant; others get 403.
 */
@Controller('v1')
export class AdminController {
  constructor(
    private readonly policy: PolicyService,
    private readonly audit: AuditRepository,
  ) {}

  @Get('acl/policy')
  async describe(@CurrentCaller() caller: Caller) {
    await this.require(caller, 'admin', 'acl');
    return this.policy.describe(caller.tenantId);
  }

  @Post('acl/role-assignments')
  @HttpCode(200)
  async assign(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    await this.require(caller, 'admin', 'acl');
    const { member, role } = parseBody(roleAssignmentSchema, body);
    return {
      version: await this.policy.change(caller, {
        kind: 'role_assigned',
        member,
        target: `r:${role}`,
      }),
    };
  }

  @Delete('acl/role-assignments')
  async unassign(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    await this.require(caller, 'admin', 'acl');
    const { member, role } = parseBody(roleAssignmentSchema, body);
    return {
      version: await this.policy.change(caller, {
        kind: 'role_unassigned',
        member,
        target: `r:${role}`,
      }),
    };
  }

  @Post('acl/groups/:group/members')
  @HttpCode(200)
  async addMember(
    @CurrentCaller() caller: Caller,
    @Param('group') group: string,
    @Body() body: unknown,
  ) {
    await this.require(caller, 'admin', 'acl');
    const { user } = parseBody(groupMemberSchema, body);
    return {
      version: await this.policy.change(caller, {
        kind: 'group_member_added',
        member: `u:${user}`,
        target: `g:${parseBody(name, group)}`,
      }),
    };
  }

  @Delete('acl/groups/:group/members/:user')
  async removeMember(
    @CurrentCaller() caller: Caller,
    @Param('group') group: string,
    @Param('user') user: string,
  ) {
    await this.require(caller, 'admin', 'acl');
    return {
      version: await this.policy.change(caller, {
        kind: 'group_member_removed',
        member: `u:${parseBody(name, user)}`,
        target: `g:${parseBody(name, group)}`,
      }),
    };
  }

  @Put('acl/roles/:role/permissions')
  async setPermissions(
    @CurrentCaller() caller: Caller,
    @Param('role') role: string,
    @Body() body: unknown,
  ) {
    await this.require(caller, 'admin', 'acl');
    const { permissions } = parseBody(permissionsSchema, body);
    return {
      version: await this.policy.change(caller, {
        kind: 'role_permissions_set',
        target: `r:${parseBody(name, role)}`,
        permissions,
      }),
    };
  }

  /** Who searched what and what came back, who changed which permission; newest first. */
  @Get('audit')
  async queryAudit(
    @CurrentCaller() caller: Caller,
    @Query() query: unknown,
  ): Promise<{ items: AuditRecord[] }> {
    await this.require(caller, 'read', 'audit');
    const q = parseBody(auditQuerySchema, query);
    return {
      items: await this.audit.query(caller.tenantId, {
        actor: q.user,
        documentId: q.document,
        action: q.action,
        from: q.from ? new Date(q.from) : undefined,
        to: q.to ? new Date(q.to) : undefined,
        limit: q.limit,
      }),
    };
  }

  private async require(caller: Caller, action: string, resource: string): Promise<void> {
    if (!(await this.policy.check(caller, action, resource))) {
      throw new ApiError(403, 'permission_denied', `${action} on ${resource} needs a tenant admin`);
    }
  }
}
