import { Injectable } from '@nestjs/common';
import { z } from 'zod';

export const checkRequestSchema = z.object({
  subject: z.object({ tenantId: z.string().min(1), userId: z.string().min(1) }),
  action: z.enum(['read', 'write', 'delete', 'admin']),
  resource: z.object({
    tenantId: z.string().min(1),
    type: z.string().min(1),
    id: z.string().min(1),
  }),
});
export type CheckRequest = z.infer<typeof checkRequestSchema>;

export interface CheckResult {
  allowed: boolean;
  reason: 'same_tenant' | 'cross_tenant';
}

/**
 * PLACEHOLDER POLICY until the access-control issue lands: inside one tenant everything is
 * allowed; across tenants everything is denied. There are no roles, groups or document ACLs yet.
 */
@Injectable()
export class AuthorizationService {
  check(request: CheckRequest): CheckResult {
    return request.subject.tenantId === request.resource.tenantId
      ? { allowed: true, reason: 'same_tenant' }
      : { allowed: false, reason: 'cross_tenant' };
  }
}
