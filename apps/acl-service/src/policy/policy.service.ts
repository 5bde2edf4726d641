import { type Action, ACTIONS, type Caller, principal } from '@kb/auth';
import { Topics } from '@kb/contracts';
import type { EventProducer } from '@kb/kafka';
import { PeriodicTask } from '@kb/timing';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import type { Enforcer } from 'casbin';

import { AuditRepository } from '../audit/audit.repository';
import { ACL_CONFIG, type AclConfig } from '../config/acl.config';
import { EndingGrants, removeGrouping } from '../grants/ending-grants';
import {
  type GrantEnd,
  type GrantEnds,
  GrantEndsRepository,
} from '../grants/grant-ends.repository';
import { CLOCK, ENFORCER, EVENT_PRODUCER } from '../platform/tokens';
import { type PolicyVersions, PolicyVersionsRepository } from './policy-versions.repository';
import { BUILT_IN_POLICIES } from './rbac.model';

/** The enforcer in use, and how to build a fresh one from the stored policy. */
export interface EnforcerSource {
  enforcer: Enforcer;
  build(): Promise<Enforcer>;
}

export interface Expansion {
  tenantId: string;
  userId: string;
  principals: string[];
  documentActions: Action[];
  policyVersion: number;
  /** ISO time the earliest expiring grant the answer used ends; '' when none ends (ADR 54). */
  validUntil: string;
}

export interface PolicyChange {
  kind:
    | 'role_assigned'
    | 'role_unassigned'
    | 'group_member_added'
    | 'group_member_removed'
    | 'role_permissions_set'
    | 'grant_added'
    | 'grant_expired';
  /** `u:alice` or `g:eng`: whose expansion changes. */
  member?: string;
  /** `r:editor` or `g:eng`. */
  target?: string;
  permissions?: Array<{ resource: string; action: string }>;
  /** Assignments and memberships only: the grant ends then (ISO, in the future). */
  expiresAt?: string;
}

/**
 * The tenant's authorization policy: a casbin enforcer over the stored rules (casbin-pg-adapter in
 * the service, casbin's StringAdapter in unit tests), with the built-in policies added in memory. Every change is saved, versioned per tenant, audited and
 * published on `kb.acl.v1` so other replicas reload and callers' caches drop stale expansions.
 */
@Injectable()
export class PolicyService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(PolicyService.name);
  private enforcer: Enforcer;
  /**
   * Each tenant's policy version the enforcer is known to hold (read before it was built). Empty
   * for the enforcer built at boot: the first request of a tenant with changes rebuilds it, so a
   * change made before this replica's `kb.acl.v1` consumer joined is not missed (review M6).
   */
  private loaded = new Map<string, number>();
  /** A `kb.acl.v1` event arrived and its reload has not succeeded yet. */
  private stale = false;
  private reloading?: Promise<void>;
  private readonly task: PeriodicTask;
  /** The ends of the current enforcer's expiring rules; replaced with it. */
  private ending = new EndingGrants();

  constructor(
    @Inject(ENFORCER) private readonly source: EnforcerSource,
    @Inject(PolicyVersionsRepository) private readonly versions: PolicyVersions,
    @Inject(EVENT_PRODUCER) private readonly producer: EventProducer,
    @Inject(AuditRepository) private readonly audit: Pick<AuditRepository, 'insert'>,
    @Inject(ACL_CONFIG) config: Pick<AclConfig, 'POLICY_RELOAD_INTERVAL_MS'>,
    @Inject(GrantEndsRepository) private readonly grantEnds: GrantEnds,
    @Optional() @Inject(CLOCK) private readonly now: () => number = Date.now,
  ) {
    this.enforcer = source.enforcer;
    // A backstop for rules changed without a version (by hand in the database).
    this.task = new PeriodicTask(
      'policy reload',
      config.POLICY_RELOAD_INTERVAL_MS,
      () => this.reload(),
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /**
   * Reloads the stored policy. A fresh enforcer is built and swapped in whole: reloading in place
   * empties the policy for a moment, and a check in that moment would deny (seen in CI before
   * this was fixed). Concurrent calls share one build.
   */
  reload(): Promise<void> {
    this.reloading ??= (async () => {
      // Versions first: every change they count was stored before its version moved.
      const versions = await this.versions.all();
      const enforcer = await this.source.build();
      // Ended rules leave the new enforcer before it answers anything.
      const ending = new EndingGrants(await this.grantEnds.all());
      await ending.dropDue(enforcer, this.now());
      this.enforcer = enforcer;
      this.ending = ending;
      this.loaded = versions;
      this.stale = false;
    })().finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  /**
   * `kb.acl.v1` says another replica changed the policy: reload now. A failed reload is logged,
   * not thrown (the event is never dead-lettered): the next request or tick reloads instead.
   */
  async reloadAfterChange(): Promise<void> {
    this.stale = true;
    await this.reload().catch((error: unknown) =>
      this.logger.warn(`policy reload failed; the next request retries: ${String(error)}`),
    );
  }

  /**
   * The tenant's policy version, after rebuilding the enforcer when it may not hold it (the
   * version moved past what it was built from, or a reload is owed). One indexed read per
   * request; a rebuild that fails fails the request rather than answering from a stale policy.
   */
  private async fresh(tenantId: string): Promise<number> {
    const current = await this.versions.current(tenantId);
    if (this.stale || current > (this.loaded.get(tenantId) ?? 0)) await this.reload();
    // An expiring grant stops at its end, not when the expiry job removes it.
    await this.ending.dropDue(this.enforcer, this.now());
    return current;
  }

  /** The caller's principals, transitively through groups and roles, and their document actions. */
  async expand(caller: Caller): Promise<Expansion> {
    const policyVersion = await this.fresh(caller.tenantId);
    const principals = await this.principalsOf(caller);
    const documentActions: Action[] = [];
    for (const action of ACTIONS) {
      if (await this.allowedFor(principals, caller.tenantId, 'documents', action)) {
        documentActions.push(action);
      }
    }
    return {
      tenantId: caller.tenantId,
      userId: caller.userId,
      principals,
      documentActions,
      policyVersion,
      validUntil:
        this.ending.validUntil(caller.tenantId, principals, this.now())?.toISOString() ?? '',
    };
  }

  async check(caller: Caller, action: string, resource: string): Promise<boolean> {
    await this.fresh(caller.tenantId);
    return this.allowedFor(await this.principalsOf(caller), caller.tenantId, resource, action);
  }

  async change(caller: Caller, change: PolicyChange): Promise<number> {
    const tenant = caller.tenantId;
    const e = this.enforcer;
    switch (change.kind) {
      case 'role_assigned':
      case 'group_member_added':
      case 'grant_added':
        await this.settleEnded(tenant, change.member!, change.target!);
        await this.setEnd(tenant, change.member!, change.target!, change.expiresAt);
        await e.addRoleForUser(change.member!, change.target!, tenant);
        break;
      case 'role_unassigned':
      case 'group_member_removed':
      case 'grant_expired':
        await e.deleteRoleForUser(change.member!, change.target!, tenant);
        await this.setEnd(tenant, change.member!, change.target!, undefined);
        break;
      case 'role_permissions_set':
        await e.removeFilteredPolicy(0, change.target!, tenant);
        for (const p of change.permissions ?? []) {
          await e.addPolicy(change.target!, tenant, p.resource, p.action);
        }
        break;
    }
    return this.record(tenant, caller.userId, change);
  }

  /** Versions, audits and publishes a change already applied to the enforcer. */
  private async record(tenant: string, actor: string, change: PolicyChange): Promise<number> {
    const version = await this.versions.bump(tenant);
    // This enforcer holds the change; it holds the tenant's version only if it held the one before.
    if ((this.loaded.get(tenant) ?? 0) === version - 1) this.loaded.set(tenant, version);
    const detail = JSON.stringify(change);
    await this.audit.insert(tenant, {
      actor,
      action: 'policy_changed',
      detail,
      documentIds: [],
      chunks: [],
      at: new Date().toISOString(),
    });
    await this.producer.publish({
      topic: Topics.acl,
      tenantId: tenant,
      key: tenant,
      payload: {
        version,
        change: change.kind,
        ...(change.member ? { principal: change.member } : {}),
      },
    });
    this.logger.log(`tenant ${tenant} policy v${version}: ${detail} by ${actor}`);
    return version;
  }

  /**
   * The expiry job's step for one ended grant: removes its stored rule, then its end (the end
   * outlives the rule, so a crash between leaves nothing honoured). The replica whose delete found
   * the end records the change as `system`; false for the others.
   */
  async expire(end: GrantEnd): Promise<boolean> {
    await removeGrouping(this.enforcer, [end.member, end.target, end.tenantId]);
    if (!(await this.grantEnds.claim(end))) return false;
    this.ending.clear(end.tenantId, end.member, end.target);
    await this.record(end.tenantId, 'system', {
      kind: 'grant_expired',
      member: end.member,
      target: end.target,
      expiresAt: end.expiresAt.toISOString(),
    });
    return true;
  }

  /** Whether `member → target` is held with an end (document grants arrive more than once). */
  async holdsGrant(tenantId: string, member: string, target: string): Promise<boolean> {
    await this.fresh(tenantId);
    return this.ending.endOf(tenantId, member, target) !== undefined;
  }

  /** A grant given again after it ended but before the job removed it: expire it first. */
  private async settleEnded(tenantId: string, member: string, target: string): Promise<void> {
    const end = this.ending.endOf(tenantId, member, target);
    if (end && end.getTime() <= this.now())
      await this.expire({ tenantId, member, target, expiresAt: end });
  }

  /** The stored end of `member → target`: set with `expiresAt`, cleared without. */
  private async setEnd(tenantId: string, member: string, target: string, expiresAt?: string) {
    if (expiresAt === undefined) {
      await this.grantEnds.clear(tenantId, member, target);
      this.ending.clear(tenantId, member, target);
      return;
    }
    const end = { tenantId, member, target, expiresAt: new Date(expiresAt) };
    await this.grantEnds.set(end);
    this.ending.set(end);
  }

  /** The tenant's stored policy: role permissions and memberships (built-ins not included). */
  async describe(tenantId: string): Promise<{
    permissions: string[][];
    memberships: string[][];
    ends: Array<{ member: string; target: string; expiresAt: string }>;
    builtIn: string[][];
    version: number;
  }> {
    const version = await this.fresh(tenantId);
    return {
      permissions: (await this.enforcer.getFilteredPolicy(1, tenantId)).map(([s, , o, a]) => [
        s!,
        o!,
        a!,
      ]),
      memberships: (await this.enforcer.getFilteredGroupingPolicy(2, tenantId)).map(([m, r]) => [
        m!,
        r!,
      ]),
      ends: this.ending.list(tenantId, this.now()).map((end) => ({
        member: end.member,
        target: end.target,
        expiresAt: end.expiresAt.toISOString(),
      })),
      builtIn: BUILT_IN_POLICIES,
      version,
    };
  }

  private async principalsOf(caller: Caller): Promise<string[]> {
    const start = [
      principal.user(caller.userId),
      principal.tenant,
      ...caller.roles.map(principal.role),
      ...caller.groups.map(principal.group),
    ];
    const all = new Set(start);
    for (const p of start) {
      for (const role of await this.enforcer.getImplicitRolesForUser(p, caller.tenantId))
        all.add(role);
    }
    return [...all].sort();
  }

  private async allowedFor(
    principals: string[],
    tenant: string,
    resource: string,
    action: string,
  ): Promise<boolean> {
    for (const p of principals) {
      if (await this.enforcer.enforce(p, tenant, resource, action)) return true;
    }
    return false;
  }
}

/** The built-in policies live in memory only: adding them through the adapter would store them. */
export function addBuiltIns(enforcer: Enforcer): void {
  const model = enforcer.getModel();
  for (const rule of BUILT_IN_POLICIES) model.addPolicy('p', 'p', rule);
}
