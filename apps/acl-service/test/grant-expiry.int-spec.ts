import { randomUUID } from 'node:crypto';

import type { Caller } from '@kb/auth';
import { toTenantId } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { MemoryEventProducer } from '@kb/testing';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import { AuditRepository } from '../src/audit/audit.repository';
import { GrantEndsRepository } from '../src/grants/grant-ends.repository';
import { GrantExpiryTask } from '../src/grants/grant-expiry.task';
import { migrations } from '../src/migrations';
import type { DB } from '../src/platform/db.generated';
import { enforcerSource } from '../src/policy/enforcer.factory';
import { PolicyService } from '../src/policy/policy.service';
import { PolicyVersionsRepository } from '../src/policy/policy-versions.repository';

jest.setTimeout(30_000);

/** Expiring grants over real Postgres (own schema), with a clock the test moves (ADR 54). */
describe('expiring grants, stored', () => {
  const schema = `acl_test_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  const clock = { now: Date.parse('2026-12-01T00:00:00Z') };
  let pool: Pool;
  let db: Kysely<DB>;
  const caller = (user: string, roles: string[] = []): Caller => ({
    tenantId: toTenantId('t1'),
    userId: user,
    roles,
    groups: [],
    token: `t1/${user}`,
  });
  const newPolicy = async () =>
    new PolicyService(
      await enforcerSource(pool),
      new PolicyVersionsRepository(db),
      new MemoryEventProducer(),
      new AuditRepository(db),
      { POLICY_RELOAD_INTERVAL_MS: 0 },
      new GrantEndsRepository(db),
      () => clock.now,
    );
  const stored = async (member: string) => {
    const { rows } = await sql<{ n: string }>`
      SELECT count(*) AS n FROM casbin WHERE rule->>0 = ${member}`.execute(db);
    return Number(rows[0]!.n);
  };

  beforeAll(async () => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 2 });
    db = createDatabase<DB>(pool);
    await migrateToLatest(db, schema, migrations);
  });

  afterAll(async () => {
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  it('stops at the end on every replica, then the job deletes the stored rule once', async () => {
    const policy = await newPolicy();
    const end = new Date(clock.now + 60_000).toISOString();
    await policy.change(caller('root', ['admin']), {
      kind: 'role_assigned',
      member: 'u:eve',
      target: 'r:editor',
      expiresAt: end,
    });
    const replica = await newPolicy();
    await replica.reload();
    expect(await replica.check(caller('eve'), 'write', 'documents')).toBe(true);
    expect((await replica.expand(caller('eve'))).validUntil).toBe(end);
    expect((await replica.describe('t1')).ends).toEqual([
      { member: 'u:eve', target: 'r:editor', expiresAt: end },
    ]);

    clock.now += 60_000;
    expect(await policy.check(caller('eve'), 'write', 'documents')).toBe(false);
    expect(await replica.check(caller('eve'), 'write', 'documents')).toBe(false);
    expect(await stored('u:eve')).toBe(1); // not removed yet: only not honoured

    const ends = new GrantEndsRepository(db);
    const jobs = [policy, replica].map(
      (p) => new GrantExpiryTask(p, ends, { GRANT_EXPIRY_INTERVAL_MS: 0 }, () => clock.now),
    );
    const removed = await Promise.all(jobs.map((job) => job.run()));
    expect(removed.reduce((a, b) => a + b)).toBe(1);
    expect(await stored('u:eve')).toBe(0);
    expect(await ends.all()).toEqual([]);
    const audit = await new AuditRepository(db).query('t1', { actor: 'system', limit: 10 });
    expect(audit.map((record) => JSON.parse(record.detail).kind)).toEqual(['grant_expired']);
    // A fresh replica never sees it again.
    const later = await newPolicy();
    expect(await later.check(caller('eve'), 'write', 'documents')).toBe(false);
  });
});
