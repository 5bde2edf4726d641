import type { Caller } from '@kb/auth';
import { type AuditEvent, Topics, toTenantId } from '@kb/contracts';
import { MemoryEventProducer } from '@kb/testing';
import { StringAdapter } from 'casbin';

import { MemoryGrantEnds } from '../grants/grant-ends.memory';
import { enforcerSourceOver } from './enforcer.factory';
import { PolicyService } from './policy.service';
import type { PolicyVersions } from './policy-versions.repository';

class MemoryPolicyVersions implements PolicyVersions {
  private readonly versions = new Map<string, number>();
  async current(tenantId: string): Promise<number> {
    return this.versions.get(tenantId) ?? 0;
  }
  async bump(tenantId: string): Promise<number> {
    const next = (this.versions.get(tenantId) ?? 0) + 1;
    this.versions.set(tenantId, next);
    return next;
  }
  async all(): Promise<Map<string, number>> {
    return new Map(this.versions);
  }
}

const caller = (
  tenant: string,
  user: string,
  roles: string[] = [],
  groups: string[] = [],
): Caller => ({
  tenantId: toTenantId(tenant),
  userId: user,
  roles,
  groups,
  token: `${tenant}/${user}`,
});
const root = caller('t1', 'root', ['admin']);

/**
 * casbin's StringAdapter holds the stored rules (`p`/`g` CSV lines) in memory: a test starts from
 * them, and changes live in the enforcer only, as they would until saved.
 */
async function setUp(stored = ['g, u:dana, r:editor, t1']) {
  const source = await enforcerSourceOver(new StringAdapter(stored.join('\n')));
  const producer = new MemoryEventProducer();
  const audit: Array<{ tenantId: string; event: AuditEvent }> = [];
  const versions = new MemoryPolicyVersions();
  const policy = new PolicyService(
    source,
    versions,
    producer,
    { insert: async (tenantId, event) => void audit.push({ tenantId, event }) },
    { POLICY_RELOAD_INTERVAL_MS: 0 },
    new MemoryGrantEnds(),
  );
  return { policy, producer, audit, source, versions };
}

describe('PolicyService', () => {
  it('denies by default: a member only reads documents, and nobody reaches what no rule grants', async () => {
    const { policy } = await setUp();
    const ann = caller('t1', 'ann');
    expect((await policy.expand(ann)).documentActions).toEqual(['read']);
    expect(await policy.check(ann, 'write', 'documents')).toBe(false);
    expect(await policy.check(ann, 'admin', 'acl')).toBe(false);
    expect(await policy.check(ann, 'read', 'audit')).toBe(false);
    expect(await policy.check(caller('t1', 'ed', ['editor']), 'admin', 'acl')).toBe(false);
    expect(await policy.check(caller('t1', 'ed', ['editor']), 'read', 'unknown')).toBe(false);
  });

  it('gives editors write and delete and admins everything, from the token roles', async () => {
    const { policy } = await setUp();
    expect((await policy.expand(caller('t1', 'ed', ['editor']))).documentActions).toEqual([
      'read',
      'write',
      'delete',
    ]);
    expect((await policy.expand(root)).documentActions).toEqual([
      'read',
      'write',
      'delete',
      'admin',
    ]);
    expect(await policy.check(root, 'admin', 'acl')).toBe(true);
    expect(await policy.check(root, 'read', 'audit')).toBe(true);
  });

  it('applies a stored assignment in its tenant only (domain = tenant)', async () => {
    const { policy } = await setUp();
    const inT1 = await policy.expand(caller('t1', 'dana'));
    expect(inT1.principals).toEqual(['r:editor', 't:*', 'u:dana']);
    expect(inT1.documentActions).toContain('write');
    const inT2 = await policy.expand(caller('t2', 'dana'));
    expect(inT2.principals).toEqual(['t:*', 'u:dana']);
    expect(inT2.documentActions).toEqual(['read']);
  });

  it('expands principals transitively through groups and roles, token groups included', async () => {
    const { policy } = await setUp();
    await policy.change(root, { kind: 'group_member_added', member: 'g:oncall', target: 'g:eng' });
    await policy.change(root, { kind: 'role_assigned', member: 'g:eng', target: 'r:editor' });
    const bob = await policy.expand(caller('t1', 'bob', [], ['oncall']));
    expect(bob.principals).toEqual(['g:eng', 'g:oncall', 'r:editor', 't:*', 'u:bob']);
    expect(bob.documentActions).toEqual(['read', 'write', 'delete']);
    expect((await policy.expand(caller('t2', 'bob', [], ['oncall']))).principals).toEqual([
      'g:oncall',
      't:*',
      'u:bob',
    ]);
  });

  it('sets a role’s permissions in the tenant (replacing the previous set), and revokes', async () => {
    const { policy } = await setUp();
    const cy = caller('t1', 'cy');
    await policy.change(root, { kind: 'role_assigned', member: 'u:cy', target: 'r:auditor' });
    await policy.change(root, {
      kind: 'role_permissions_set',
      target: 'r:auditor',
      permissions: [{ resource: 'audit', action: 'read' }],
    });
    expect(await policy.check(cy, 'read', 'audit')).toBe(true);
    expect(await policy.check(caller('t2', 'cy', ['auditor']), 'read', 'audit')).toBe(false);
    await policy.change(root, {
      kind: 'role_permissions_set',
      target: 'r:auditor',
      permissions: [{ resource: 'documents', action: 'write' }],
    });
    expect(await policy.check(cy, 'read', 'audit')).toBe(false);
    expect(await policy.check(cy, 'write', 'documents')).toBe(true);
    await policy.change(root, { kind: 'role_unassigned', member: 'u:cy', target: 'r:auditor' });
    expect(await policy.check(cy, 'write', 'documents')).toBe(false);
    expect(await policy.describe('t1')).toMatchObject({
      permissions: [['r:auditor', 'documents', 'write']],
      memberships: [['u:dana', 'r:editor']],
    });
    expect((await policy.describe('t2')).permissions).toEqual([]);
  });

  it('versions each tenant’s changes, audits them and publishes them on kb.acl.v1', async () => {
    const { policy, producer, audit } = await setUp();
    expect((await policy.expand(caller('t1', 'ann'))).policyVersion).toBe(0);
    expect(
      await policy.change(root, { kind: 'group_member_added', member: 'u:ann', target: 'g:eng' }),
    ).toBe(1);
    expect(
      await policy.change(root, { kind: 'group_member_removed', member: 'u:ann', target: 'g:eng' }),
    ).toBe(2);
    const otherRoot = caller('t2', 'root', ['admin']);
    expect(
      await policy.change(otherRoot, { kind: 'role_assigned', member: 'u:x', target: 'r:editor' }),
    ).toBe(1);
    expect((await policy.expand(caller('t1', 'ann'))).policyVersion).toBe(2);
    expect(producer.events(Topics.acl).map((e) => [e.tenantId, e.payload])).toEqual([
      ['t1', { version: 1, change: 'group_member_added', principal: 'u:ann' }],
      ['t1', { version: 2, change: 'group_member_removed', principal: 'u:ann' }],
      ['t2', { version: 1, change: 'role_assigned', principal: 'u:x' }],
    ]);
    expect(producer.messages.map((m) => m.key)).toEqual(['t1', 't1', 't2']);
    expect(audit.map((a) => [a.tenantId, a.event.actor, a.event.action])).toEqual([
      ['t1', 'root', 'policy_changed'],
      ['t1', 'root', 'policy_changed'],
      ['t2', 'root', 'policy_changed'],
    ]);
    expect(JSON.parse(audit[1]!.event.detail)).toEqual({
      kind: 'group_member_removed',
      member: 'u:ann',
      target: 'g:eng',
    });
  });

  it('reloads by swapping in an enforcer built from the stored rules', async () => {
    const { policy } = await setUp();
    // Not saved through the adapter: the StringAdapter's rules are what a reload reads.
    await policy.change(root, { kind: 'role_assigned', member: 'u:eve', target: 'r:editor' });
    expect(await policy.check(caller('t1', 'eve'), 'write', 'documents')).toBe(true);
    await policy.reload();
    expect(await policy.check(caller('t1', 'eve'), 'write', 'documents')).toBe(false);
    expect(await policy.check(caller('t1', 'dana'), 'write', 'documents')).toBe(true);
    expect(await policy.check(root, 'admin', 'acl')).toBe(true);
  });

  it('rebuilds before answering when the tenant’s version moved past what it was built from', async () => {
    const { policy, source, versions } = await setUp();
    let builds = 0;
    const build = source.build;
    source.build = () => ((builds += 1), build());
    await policy.reload();
    expect(builds).toBe(1);
    await policy.expand(caller('t1', 'ann'));
    expect(builds).toBe(1); // nothing moved: one version read, no rebuild
    // Another replica changed t1's policy and this one missed kb.acl.v1.
    await versions.bump('t1');
    await policy.check(caller('t1', 'ann'), 'read', 'documents');
    expect(builds).toBe(2);
    await policy.expand(caller('t1', 'ann'));
    expect(builds).toBe(2);
  });

  it('never throws on kb.acl.v1 when the reload fails: the next request reloads', async () => {
    const { policy, source } = await setUp();
    const build = source.build;
    let failing = true;
    source.build = () => (failing ? Promise.reject(new Error('database away')) : build());
    await expect(policy.reloadAfterChange()).resolves.toBeUndefined();
    await expect(policy.expand(caller('t1', 'dana'))).rejects.toThrow('database away');
    failing = false;
    expect((await policy.expand(caller('t1', 'dana'))).documentActions).toContain('write');
  });
});
