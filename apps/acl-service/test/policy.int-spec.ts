import { randomUUID } from 'node:crypto';

import type { Caller } from '@kb/auth';
import { Topics, toTenantId } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { MemoryEventProducer } from '@kb/testing';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import { AuditRepository } from '../src/audit/audit.repository';
import { GrantEndsRepository } from '../src/grants/grant-ends.repository';
import { migrations } from '../src/migrations';
import type { DB } from '../src/platform/db.generated';
import { enforcerSource } from '../src/policy/enforcer.factory';
import { PolicyService } from '../src/policy/policy.service';
import { PolicyVersionsRepository } from '../src/policy/policy-versions.repository';

jest.setTimeout(30_000);

/** The policy over real Postgres (its own schema); published events are recorded, not sent. */
describe('PolicyService', () => {
  const schema = `acl_test_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  let pool: Pool;
  let db: Kysely<DB>;
  let policy: PolicyService;
  const producer = new MemoryEventProducer();
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

  beforeAll(async () => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 2 });
    db = createDatabase<DB>(pool);
    await migrateToLatest(db, schema, migrations);
    policy = new PolicyService(
      await enforcerSource(pool),
      new PolicyVersionsRepository(db),
      producer,
      new AuditRepository(db),
      { POLICY_RELOAD_INTERVAL_MS: 0 },
      new GrantEndsRepository(db),
    );
  });

  afterAll(async () => {
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  it('gives every member read, editors write and delete, admins everything', async () => {
    expect((await policy.expand(caller('t1', 'ann'))).documentActions).toEqual(['read']);
    expect((await policy.expand(caller('t1', 'ed', ['editor']))).documentActions).toEqual([
      'read',
      'write',
      'delete',
    ]);
    expect(await policy.check(root, 'admin', 'acl')).toBe(true);
    expect(await policy.check(caller('t1', 'ed', ['editor']), 'admin', 'acl')).toBe(false);
  });

  it('expands principals transitively through groups and roles, within the tenant only', async () => {
    await policy.change(root, { kind: 'group_member_added', member: 'u:bob', target: 'g:eng' });
    await policy.change(root, { kind: 'role_assigned', member: 'g:eng', target: 'r:editor' });
    const bob = await policy.expand(caller('t1', 'bob', [], ['oncall']));
    expect(bob.principals).toEqual(['g:eng', 'g:oncall', 'r:editor', 't:*', 'u:bob']);
    expect(bob.documentActions).toContain('write');
    const elsewhere = await policy.expand(caller('t2', 'bob'));
    expect(elsewhere.principals).toEqual(['t:*', 'u:bob']);
    expect(elsewhere.documentActions).toEqual(['read']);
  });

  it('versions, audits and publishes every change, and revokes', async () => {
    const before = (await policy.expand(caller('t1', 'cy'))).policyVersion;
    await policy.change(root, { kind: 'role_assigned', member: 'u:cy', target: 'r:auditor' });
    await policy.change(root, {
      kind: 'role_permissions_set',
      target: 'r:auditor',
      permissions: [{ resource: 'audit', action: 'read' }],
    });
    const cy = caller('t1', 'cy');
    expect(await policy.check(cy, 'read', 'audit')).toBe(true);
    await policy.change(root, { kind: 'role_unassigned', member: 'u:cy', target: 'r:auditor' });
    expect(await policy.check(cy, 'read', 'audit')).toBe(false);
    const after = await policy.expand(cy);
    expect(after.policyVersion).toBe(before + 3);
    expect(
      producer
        .events(Topics.acl)
        .slice(-3)
        .map((e) => e.tenantId),
    ).toEqual(['t1', 't1', 't1']);
    const audit = await new AuditRepository(db).query('t1', {
      actor: 'root',
      action: 'policy_changed',
      limit: 10,
    });
    expect(audit[0]!.detail).toContain('role_unassigned');
    expect(await policy.describe('t2')).toMatchObject({ permissions: [], memberships: [] });
  });

  it('keeps the stored policy across a reload, and the built-ins out of storage', async () => {
    // Checks running while the policy reloads never see it empty.
    const reloading = policy.reload();
    const during = await Promise.all(
      Array.from({ length: 20 }, () => policy.check(root, 'admin', 'acl')),
    );
    await reloading;
    expect(during).toEqual(Array.from({ length: 20 }, () => true));
    expect((await policy.expand(caller('t1', 'bob'))).principals).toContain('r:editor');
    const { rows } = await sql<{
      n: string;
    }>`SELECT count(*) AS n FROM casbin WHERE rule->>0 = 't:*'`.execute(db);
    expect(Number(rows[0]!.n)).toBe(0);
  });

  it('a replica that missed the reload event still answers with the changed policy (review M6)', async () => {
    // Built now, as at boot; it never receives kb.acl.v1.
    const replica = new PolicyService(
      await enforcerSource(pool),
      new PolicyVersionsRepository(db),
      new MemoryEventProducer(),
      new AuditRepository(db),
      { POLICY_RELOAD_INTERVAL_MS: 0 },
      new GrantEndsRepository(db),
    );
    await policy.change(root, { kind: 'group_member_added', member: 'u:gus', target: 'g:ops' });
    expect((await replica.expand(caller('t1', 'gus'))).principals).toContain('g:ops');
    await policy.change(root, { kind: 'group_member_removed', member: 'u:gus', target: 'g:ops' });
    expect((await replica.expand(caller('t1', 'gus'))).principals).not.toContain('g:ops');
    await policy.change(root, { kind: 'role_assigned', member: 'u:gus', target: 'r:editor' });
    expect(await replica.check(caller('t1', 'gus'), 'write', 'documents')).toBe(true);
  });
});
