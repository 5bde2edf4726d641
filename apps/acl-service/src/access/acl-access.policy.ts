import {
  type Access,
  type AccessPolicy,
  ADMIN_ROLE,
  AuthError,
  AuthErrorCode,
  type Caller,
  type Permission,
  principal,
} from '@kb/auth';
import { Injectable } from '@nestjs/common';

import { PolicyService } from '../policy/policy.service';

/**
 * The access policy behind `@Authenticated()` here: acl-service decides from its own enforcer
 * instead of asking itself over gRPC as the other services do.
 */
@Injectable()
export class AclAccessPolicy implements AccessPolicy {
  constructor(private readonly policy: PolicyService) {}

  async accessOf(caller: Caller): Promise<Access> {
    const expansion = await this.policy.expand(caller);
    return {
      tenantId: expansion.tenantId,
      userId: expansion.userId,
      principals: expansion.principals,
      documentActions: new Set(expansion.documentActions),
      isAdmin: expansion.principals.includes(principal.role(ADMIN_ROLE)),
    };
  }

  async authorize(caller: Caller, { action, resource }: Permission): Promise<void> {
    if (!(await this.policy.check(caller, action, resource))) {
      throw new AuthError(
        AuthErrorCode.PermissionDenied,
        `${action} on ${resource} needs a tenant admin`,
      );
    }
  }
}
