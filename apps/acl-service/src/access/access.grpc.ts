import type { Caller } from '@kb/auth';
import type { aclv1 } from '@kb/contracts';
import { GrpcService } from '@kb/grpc';
import { Authenticated, CurrentCaller } from '@kb/http';
import { GrpcMethod, Payload } from '@nestjs/microservices';

import { PolicyService } from '../policy/policy.service';

/** Checks answered per BatchCheck call; the rest of a longer batch is ignored. */
const MAX_BATCH = 100;

/**
 * gRPC `kb.v1.AccessControl`, the decisions other services ask for: the caller is the token in
 * the `authorization` metadata, which they forward unchanged.
 */
@GrpcService()
export class AccessGrpcController {
  constructor(private readonly policy: PolicyService) {}

  @GrpcMethod('AccessControl', 'Check')
  @Authenticated()
  async check(
    @Payload() request: aclv1.CheckRequest,
    @CurrentCaller() caller: Caller,
  ): Promise<aclv1.CheckResponse> {
    return { allowed: await this.policy.check(caller, request.action, request.resource) };
  }

  @GrpcMethod('AccessControl', 'BatchCheck')
  @Authenticated()
  async batchCheck(
    @Payload() request: aclv1.BatchCheckRequest,
    @CurrentCaller() caller: Caller,
  ): Promise<aclv1.BatchCheckResponse> {
    const results: aclv1.CheckResponse[] = [];
    for (const c of request.checks.slice(0, MAX_BATCH)) {
      results.push({ allowed: await this.policy.check(caller, c.action, c.resource) });
    }
    return { results };
  }

  @GrpcMethod('AccessControl', 'ExpandPrincipals')
  @Authenticated()
  expandPrincipals(@CurrentCaller() caller: Caller): Promise<aclv1.ExpandPrincipalsResponse> {
    return this.policy.expand(caller);
  }
}
