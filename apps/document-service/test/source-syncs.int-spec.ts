import { randomUUID } from 'node:crypto';

import { toTenantId } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { leaseQueueConformance } from '@kb/jobs/test/support/lease-queue.conformance';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import { migrations } from '../src/migrations';
import type { DocumentDatabase } from '../src/platform/db.types';
import { type DueSource, SourcesRepository } from '../src/sources/sources.repository';

jest.setTimeout(60_000);

const tenant = toTenantId('t1');
const minutes = (n: number) => n * 60_000;

/** One running sync per source, in Postgres: refused while one runs, taken over once abandoned. */
describe('source syncs in SQL', () => {
  const schema = `source_syncs_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let pool: Pool;
  let db: Kysely<DocumentDatabase>;
  let sources: SourcesRepository;
  const t0 = new Date('2026-11-28T10:00:00Z');
  const at = (ms: number) => new Date(t0.getTime() + ms);

  beforeAll(async () => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 6 });
    db = createDatabase<DocumentDatabase>(pool);
    await migrateToLatest(db, schema, migrations);
    sources = new SourcesRepository(db);
  });
  afterAll(async () => {
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  const newSource = async (schedule?: { cron: string; nextSyncAt: Date }) =>
    (
      await sources.insert(tenant, {
        id: randomUUID(),
        name: 's',
        knowledgeBaseId: 'default',
        kind: 's3',
        bucket: 'bucket-a',
        prefix: '',
        include: [],
        exclude: [],
        createdBy: 'alice',
        now: t0,
        ...(schedule ? { schedule: schedule.cron } : {}),
        nextSyncAt: schedule?.nextSyncAt ?? null,
      })
    ).id;

  it('lets one of several racing schedulers claim a due source for a lease, then moves it on', async () => {
    const due = await newSource({ cron: '*/5 * * * *', nextSyncAt: at(-minutes(1)) });
    const later = await newSource({ cron: '*/5 * * * *', nextSyncAt: at(minutes(10)) });
    const claims = await Promise.all([1, 2, 3, 4].map(() => sources.claimDue(t0, 100, minutes(1))));
    const claimed = claims.flat().filter((c) => c.source.id === due || c.source.id === later);
    expect(claimed.map((c) => c.source.id)).toEqual([due]);
    expect(claimed[0]!.tenantId).toBe(tenant);
    // Held until the lease ends, then moved to its next time once its sync started.
    expect((await sources.find(tenant, due))?.nextSyncAt).toBe(at(minutes(1)).toISOString());
    const next = at(minutes(4));
    expect(await sources.scheduleNext(claimed[0]!, next)).toBe(true);
    expect((await sources.find(tenant, due))?.nextSyncAt).toBe(next.toISOString());
    expect((await sources.find(tenant, later))?.nextSyncAt).toBe(at(minutes(10)).toISOString());
    // Not due again until its next time.
    const again = (await sources.claimDue(at(minutes(2)), 100, minutes(1))).map((c) => c.source.id);
    expect(again).not.toContain(due);
    // A sync it starts says the schedule started it.
    const outcome = await sources.startSync(tenant, due, randomUUID(), t0, t0, 'schedule');
    expect('started' in outcome && outcome.started.trigger).toBe('schedule');
  });

  it('keeps a schedule changed while its source was claimed', async () => {
    const id = await newSource({ cron: '*/5 * * * *', nextSyncAt: at(-minutes(1)) });
    const [claimed] = (await sources.claimDue(t0, 100, minutes(1))).filter(
      (c) => c.source.id === id,
    );
    const changed = at(minutes(30));
    await sql`UPDATE sources SET next_sync_at = ${changed} WHERE id = ${id}`.execute(db);
    expect(await sources.scheduleNext(claimed!, at(minutes(4)))).toBe(false);
    expect((await sources.find(tenant, id))?.nextSyncAt).toBe(changed.toISOString());
  });

  describe('due sources as a lease queue', () => {
    let now = at(minutes(60 * 24));
    leaseQueueConformance<DueSource>(async () => {
      now = new Date(now.getTime() + minutes(60));
      // Emptied: no source of an earlier test is due.
      await sql`UPDATE sources SET next_sync_at = NULL`.execute(db);
      return {
        queue: { claim: (limit, leaseMs) => sources.claimDue(now, limit, leaseMs) },
        add: async (count) =>
          Promise.all(
            Array.from({ length: count }, () =>
              newSource({ cron: '*/5 * * * *', nextSyncAt: new Date(now.getTime() - 1) }),
            ),
          ),
        idOf: (due) => due.source.id,
        finish: async (due) => void (await sources.scheduleNext(due, null)),
        elapse: async (ms) => Promise.resolve(void (now = new Date(now.getTime() + ms))),
      };
    });
  });

  it('starts one sync of a source at a time, even when two start at once', async () => {
    const source = await newSource();
    const outcomes = await Promise.all(
      [1, 2, 3].map(() => sources.startSync(tenant, source, randomUUID(), t0, at(-minutes(5)))),
    );
    const started = outcomes.filter((o) => 'started' in o);
    expect(started).toHaveLength(1);
    const runningId = 'started' in started[0]! ? started[0].started.id : '';
    for (const outcome of outcomes.filter((o) => 'running' in o)) {
      expect('running' in outcome && outcome.running.id).toBe(runningId);
    }
    // Another source is not held up.
    expect(
      'started' in (await sources.startSync(tenant, await newSource(), randomUUID(), t0, t0)),
    ).toBe(true);
  });

  it('takes over a sync whose heartbeat stopped, and not one whose heartbeat goes on', async () => {
    const source = await newSource();
    const first = await sources.startSync(tenant, source, randomUUID(), t0, at(-minutes(5)));
    const firstId = 'started' in first ? first.started.id : '';
    // Four minutes on, its heartbeat renewed at minute 3: still at work.
    await sources.heartbeat(tenant, firstId, at(minutes(3)));
    const refused = await sources.startSync(
      tenant,
      source,
      randomUUID(),
      at(minutes(6)),
      at(minutes(1)),
    );
    expect('running' in refused && refused.running.id).toBe(firstId);
    // Nine minutes on, no heartbeat since minute 3: abandoned, closed and replaced.
    const takeover = await sources.startSync(
      tenant,
      source,
      randomUUID(),
      at(minutes(9)),
      at(minutes(4)),
    );
    expect('started' in takeover).toBe(true);
    expect(await sources.findSync(tenant, source, firstId)).toMatchObject({
      status: 'failed',
      failures: [{ path: '/', reason: 'sync_abandoned' }],
      finishedAt: at(minutes(9)).toISOString(),
    });
    // A finished sync's heartbeat is not renewed, and another tenant does not see it.
    await sources.heartbeat(tenant, firstId, at(minutes(10)));
    expect((await sources.findSync(tenant, source, firstId))?.status).toBe('failed');
    expect(await sources.findSync(toTenantId('t2'), source, firstId)).toBeUndefined();
  });
});
