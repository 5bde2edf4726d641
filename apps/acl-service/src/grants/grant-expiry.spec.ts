import { type Caller, principal } from '@kb/auth';
import { type AuditEvent, Topics, toTenantId } from '@kb/contracts';
import { MemoryEventProducer } from '@kb/testing';
import { StringAdapter } from 'casbin';

import { enforcerSourceOver } from '../policy/enforcer.factory';
import { PolicyService } from '../policy/policy.service';
import type { PolicyVersions } from '../policy/policy-versions.repository';
import { grantPrincipalsOf, registerGrants } from './document-grants.consumer';
import { MemoryGrantEnds } from './grant-ends.memory';
import { GrantExpiryTask } from './grant-expiry.task';

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

const caller = (user: string, groups: string[] = []): Caller => ({
  tenantId: toTenantId('t1'),
  userId: user,
  roles: [],
  groups,
  token: `t1/${user}`,
});
const root: Caller = { ...caller('root'), roles: ['admin'] };
const T0 = Date.parse('2026-12-01T00:00:00Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

/** A policy over stored rules, with its clock at T0 (`clock.now` moves it). */
async function setUp(stored: string[] = ['g, u:nobody, r:none, t0'], ends = new MemoryGrantEnds()) {
  const clock = { now: T0 };
  const source = await enforcerSourceOver(new StringAdapter(stored.join('\n')));
  const producer = new MemoryEventProducer();
  const audit: Array<{ tenantId: string; event: AuditEvent }> = [];
  const policy = new PolicyService(
    source,
    new MemoryPolicyVersions(),
    producer,
    { insert: async (tenantId, event) => void audit.push({ tenantId, event }) },
    { POLICY_RELOAD_INTERVAL_MS: 0 },
    ends,
    () => clock.now,
  );
  const job = new GrantExpiryTask(policy, ends, { GRANT_EXPIRY_INTERVAL_MS: 0 }, () => clock.now);
  return { policy, producer, audit, ends, clock, job };
}

describe('expiring grants', () => {
  it('honours a role assignment until its end and not a moment after, before any job ran', async () => {
    const { policy, clock } = await setUp();
    await policy.change(root, {
      kind: 'role_assigned',
      member: 'u:eve',
      target: 'r:editor',
      expiresAt: at(2),
    });
    const before = await policy.expand(caller('eve'));
    expect(before.principals).toContain('r:editor');
    expect(before.documentActions).toContain('write');
    expect(before.validUntil).toBe(at(2));
    clock.now = T0 + 2000;
    const after = await policy.expand(caller('eve'));
    expect(after.principals).toEqual(['t:*', 'u:eve']);
    expect(after.documentActions).toEqual(['read']);
    expect(after.validUntil).toBe('');
    expect(await policy.check(caller('eve'), 'write', 'documents')).toBe(false);
  });

  it('ends a group membership, and what the group gave, transitively', async () => {
    const { policy, clock } = await setUp(['g, g:eng, r:editor, t1']);
    await policy.change(root, {
      kind: 'group_member_added',
      member: 'u:bob',
      target: 'g:eng',
      expiresAt: at(5),
    });
    // A grant the caller does not hold does not shorten its answer.
    await policy.change(root, {
      kind: 'role_assigned',
      member: 'u:zoe',
      target: 'r:editor',
      expiresAt: at(1),
    });
    const bob = await policy.expand(caller('bob'));
    expect(bob.principals).toEqual(['g:eng', 'r:editor', 't:*', 'u:bob']);
    expect(bob.validUntil).toBe(at(5));
    clock.now = T0 + 5000;
    expect((await policy.expand(caller('bob'))).principals).toEqual(['t:*', 'u:bob']);
    // Others keep the group's rights.
    expect((await policy.expand(caller('cy', ['eng']))).documentActions).toContain('write');
  });

  it('does not bring an ended grant back when the enforcer is rebuilt from the stored rules', async () => {
    const ends = new MemoryGrantEnds();
    await ends.set({
      tenantId: 't1',
      member: 'u:dana',
      target: 'r:editor',
      expiresAt: new Date(T0 + 1000),
    });
    const { policy, clock } = await setUp(['g, u:dana, r:editor, t1'], ends);
    await policy.reload();
    expect(await policy.check(caller('dana'), 'write', 'documents')).toBe(true);
    clock.now = T0 + 1000;
    await policy.reload();
    expect(await policy.check(caller('dana'), 'write', 'documents')).toBe(false);
    expect((await policy.describe('t1')).memberships).toEqual([]);
  });

  it('the job removes ended grants once, audited as system and published on kb.acl.v1', async () => {
    const { policy, clock, job, audit, producer, ends } = await setUp();
    await policy.change(root, {
      kind: 'role_assigned',
      member: 'u:eve',
      target: 'r:editor',
      expiresAt: at(2),
    });
    await policy.change(root, {
      kind: 'role_assigned',
      member: 'u:fay',
      target: 'r:editor',
      expiresAt: at(60),
    });
    expect((await policy.describe('t1')).ends).toEqual([
      { member: 'u:eve', target: 'r:editor', expiresAt: at(2) },
      { member: 'u:fay', target: 'r:editor', expiresAt: at(60) },
    ]);
    expect(await job.run()).toBe(0);
    clock.now = T0 + 3000;
    expect(await job.run()).toBe(1);
    expect(await job.run()).toBe(0);
    expect([...ends.rows.values()].map((end) => end.member)).toEqual(['u:fay']);
    expect(audit.map((a) => [a.event.actor, JSON.parse(a.event.detail).kind])).toEqual([
      ['root', 'role_assigned'],
      ['root', 'role_assigned'],
      ['system', 'grant_expired'],
    ]);
    expect(JSON.parse(audit[2]!.event.detail)).toEqual({
      kind: 'grant_expired',
      member: 'u:eve',
      target: 'r:editor',
      expiresAt: at(2),
    });
    expect(producer.events(Topics.acl).at(-1)!.payload).toEqual({
      version: 3,
      change: 'grant_expired',
      principal: 'u:eve',
    });
    expect((await policy.describe('t1')).ends.map((end) => end.member)).toEqual(['u:fay']);
  });

  it('makes a grant permanent when it is given again without an end, and renews an ended one', async () => {
    const { policy, clock, audit } = await setUp();
    const eve = { kind: 'role_assigned', member: 'u:eve', target: 'r:editor' } as const;
    await policy.change(root, { ...eve, expiresAt: at(2) });
    await policy.change(root, eve);
    clock.now = T0 + 10_000;
    expect(await policy.check(caller('eve'), 'write', 'documents')).toBe(true);
    expect((await policy.expand(caller('eve'))).validUntil).toBe('');

    await policy.change(root, {
      kind: 'role_assigned',
      member: 'u:gil',
      target: 'r:editor',
      expiresAt: at(11),
    });
    clock.now = T0 + 12_000;
    expect(await policy.check(caller('gil'), 'write', 'documents')).toBe(false);
    // Given again after its end, before the job: the old grant is recorded as expired first.
    await policy.change(root, {
      kind: 'role_assigned',
      member: 'u:gil',
      target: 'r:editor',
      expiresAt: at(20),
    });
    expect(await policy.check(caller('gil'), 'write', 'documents')).toBe(true);
    expect(audit.map((a) => JSON.parse(a.event.detail).kind).slice(-2)).toEqual([
      'grant_expired',
      'role_assigned',
    ]);
  });
});

describe('document grants (kb.document.v1)', () => {
  const bobUntil = principal.grant('u:bob', new Date(T0 + 4000));
  const engUntil = principal.grant('g:eng', new Date(T0 + 8000));
  const uploaded = (principals: string[]) =>
    ({
      kind: 'acl_changed',
      documentId: '00000000-0000-4000-8000-000000000001',
      principals,
      metaVersion: 2,
    }) as const;

  it('finds the grant principals a document event names, and nothing else', () => {
    expect(grantPrincipalsOf(uploaded(['u:alice', bobUntil, 'x:nonsense', 'g:eng']))).toEqual([
      bobUntil,
    ]);
    expect(
      grantPrincipalsOf({
        kind: 'access_snapshot',
        documents: [
          {
            documentId: '00000000-0000-4000-8000-000000000001',
            metaVersion: 1,
            principals: [bobUntil],
          },
          {
            documentId: '00000000-0000-4000-8000-000000000002',
            metaVersion: 1,
            principals: [bobUntil, engUntil],
          },
        ],
      }),
    ).toEqual([bobUntil, engUntil]);
  });

  it('links a member to its grant principal until the end, once, audited as system', async () => {
    const { policy, clock, audit } = await setUp();
    const ended = principal.grant('u:old', new Date(T0 - 1));
    expect(await registerGrants(policy, 't1', [bobUntil, engUntil, ended], clock.now)).toBe(2);
    expect(await registerGrants(policy, 't1', [bobUntil, engUntil], clock.now)).toBe(0);
    expect(audit.map((a) => [a.event.actor, JSON.parse(a.event.detail).kind])).toEqual([
      ['system', 'grant_added'],
      ['system', 'grant_added'],
    ]);
    const bob = await policy.expand(caller('bob', ['eng']));
    expect(bob.principals).toEqual(['g:eng', 'u:bob', 't:*', bobUntil, engUntil].sort());
    expect(bob.validUntil).toBe(at(4));
    expect((await policy.expand(caller('cy'))).principals).toEqual(['t:*', 'u:cy']);
    clock.now = T0 + 4000;
    expect((await policy.expand(caller('bob', ['eng']))).principals).toEqual(
      ['g:eng', 'u:bob', 't:*', engUntil].sort(),
    );
    clock.now = T0 + 8000;
    expect((await policy.expand(caller('bob', ['eng']))).principals).toEqual([
      'g:eng',
      't:*',
      'u:bob',
    ]);
  });
});
