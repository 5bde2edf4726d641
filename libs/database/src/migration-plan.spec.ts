import {
  describeResults,
  migrateAtStart,
  type MigrationPlan,
  type MigrationRunner,
  migrationsReadinessCheck,
  runMigrationPlans,
} from './migration-plan';

const plan = (history: Partial<MigrationPlan>): MigrationPlan => ({
  url: 'postgres://fake/db',
  migrations: {},
  ...history,
});

/** Records the order plans ran in; `pending` answers from a per-history queue of answers. */
class FakeRunner implements MigrationRunner {
  readonly migrated: string[] = [];
  pendingCalls = 0;
  constructor(
    private readonly applied: Record<string, string[]> = {},
    private readonly pendingAnswers: string[][] = [],
  ) {}

  async migrate(p: MigrationPlan): Promise<string[]> {
    const key = p.schema ?? p.table ?? '?';
    if (key === 'broken') throw new Error('relation "chunks" already exists');
    this.migrated.push(key);
    return this.applied[key] ?? [];
  }

  async pending(): Promise<string[]> {
    this.pendingCalls += 1;
    return this.pendingAnswers.shift() ?? [];
  }
}

describe('runMigrationPlans', () => {
  it('applies the plans in the order given and reports each history', async () => {
    const runner = new FakeRunner({ search_index: ['20261122T1700_create_chunks'] });
    const results = await runMigrationPlans(
      [plan({ schema: 'search_index' }), plan({ table: 'kb_vectors_384_migration' })],
      runner,
    );
    expect(runner.migrated).toEqual(['search_index', 'kb_vectors_384_migration']);
    expect(results).toEqual([
      { history: 'schema search_index', applied: ['20261122T1700_create_chunks'] },
      { history: 'history kb_vectors_384_migration', applied: [] },
    ]);
    expect(describeResults(results)).toBe(
      'schema search_index: 20261122T1700_create_chunks; history kb_vectors_384_migration: none pending',
    );
  });

  it('stops at the first failing plan: a later one may need its tables', async () => {
    const runner = new FakeRunner();
    await expect(
      runMigrationPlans(
        [plan({ schema: 'first' }), plan({ schema: 'broken' }), plan({ schema: 'last' })],
        runner,
      ),
    ).rejects.toThrow('already exists');
    expect(runner.migrated).toEqual(['first']);
  });
});

describe('migrationsReadinessCheck', () => {
  it('is named "migrations", false while any plan has pending names, then true', async () => {
    const runner = new FakeRunner({}, [[], ['20261123T1400_embeddings'], [], []]);
    const check = migrationsReadinessCheck([plan({ schema: 'a' }), plan({ schema: 'b' })], runner);
    expect(check.name).toBe('migrations');
    expect(await check.check()).toBe(false);
    expect(await check.check()).toBe(true);
  });

  it('stops asking the database once every plan is up to date', async () => {
    const runner = new FakeRunner();
    const check = migrationsReadinessCheck([plan({ schema: 'a' })], runner);
    expect(await check.check()).toBe(true);
    expect(await check.check()).toBe(true);
    expect(runner.pendingCalls).toBe(1);
  });

  it('is true without plans (pinecone: no vector tables to migrate)', async () => {
    expect(await migrationsReadinessCheck([], new FakeRunner()).check()).toBe(true);
  });
});

describe('migrateAtStart', () => {
  it('applies and logs when MIGRATE_ON_START is on', async () => {
    const runner = new FakeRunner({ acl_service: ['20261123T1100_acl_tables'] });
    const lines: string[] = [];
    await migrateAtStart(true, [plan({ schema: 'acl_service' })], (l) => lines.push(l), runner);
    expect(runner.migrated).toEqual(['acl_service']);
    expect(lines).toEqual(['migrations: schema acl_service: 20261123T1100_acl_tables']);
  });

  it('leaves the database alone when it is off (the Helm hook migrates)', async () => {
    const runner = new FakeRunner();
    const lines: string[] = [];
    await migrateAtStart(false, [plan({ schema: 'acl_service' })], (l) => lines.push(l), runner);
    expect(runner.migrated).toEqual([]);
    expect(lines).toEqual([]);
  });
});
