import { Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';

import { createPool, guardPool } from './database';
import {
  describeHistory,
  migrateToLatest,
  type MigrationHistory,
  type Migrations,
  pendingMigrations,
} from './migrator';

/** One history to bring up to date: which database, where the history lives, and its list. */
export interface MigrationPlan extends MigrationHistory {
  url: string;
  migrations: Migrations;
}

/** What a plan ran: its history and the names applied (empty when nothing was pending). */
export interface PlanResult {
  history: string;
  applied: string[];
}

/** Applies or inspects one plan; the Postgres one below, or a fake in unit specs. */
export interface MigrationRunner {
  migrate(plan: MigrationPlan): Promise<string[]>;
  pending(plan: MigrationPlan): Promise<string[]>;
}

/** Opens one connection per call, scoped like the plan's owner scopes its own pool. */
export const postgresMigrationRunner: MigrationRunner = {
  migrate: (plan) =>
    withDatabase(plan, async (db) => (await migrateToLatest(db, plan, plan.migrations)).applied),
  pending: (plan) => withDatabase(plan, (db) => pendingMigrations(db, plan, plan.migrations)),
};

/**
 * Applies the plans one after another, in the order given, and stops at the first failure: a
 * later plan may assume an earlier one's tables.
 */
export async function runMigrationPlans(
  plans: MigrationPlan[],
  runner: MigrationRunner = postgresMigrationRunner,
): Promise<PlanResult[]> {
  const results: PlanResult[] = [];
  for (const plan of plans) {
    results.push({ history: describeHistory(plan), applied: await runner.migrate(plan) });
  }
  return results;
}

/**
 * The start-up half of MIGRATE_ON_START, the same in every service: applies the plans when the
 * switch is on (locally, by default) and logs what ran; the Helm hook migrates otherwise.
 */
export async function migrateAtStart(
  enabled: boolean,
  plans: MigrationPlan[],
  log: (line: string) => void,
  runner: MigrationRunner = postgresMigrationRunner,
): Promise<void> {
  if (!enabled) return;
  log(`migrations: ${describeResults(await runMigrationPlans(plans, runner))}`);
}

/** One log line per plan: `schema acl_service: 20261123T1100_acl_tables` or `… none pending`. */
export function describeResults(results: PlanResult[]): string {
  return results
    .map((r) => `${r.history}: ${r.applied.length ? r.applied.join(', ') : 'none pending'}`)
    .join('; ');
}

/**
 * The readiness check of a service with a schema: false while any plan has migrations pending
 * (the Helm hook, or a newer replica, has not applied them yet). Applied migrations stay applied,
 * so once every plan is up to date the check stops asking the database.
 */
export function migrationsReadinessCheck(
  plans: MigrationPlan[],
  runner: MigrationRunner = postgresMigrationRunner,
): { name: 'migrations'; check(): Promise<boolean> } {
  let upToDate = false;
  return {
    name: 'migrations',
    async check() {
      if (upToDate) return true;
      const pending = await Promise.all(plans.map((plan) => runner.pending(plan)));
      upToDate = pending.every((names) => names.length === 0);
      return upToDate;
    },
  };
}

async function withDatabase<T>(
  plan: MigrationPlan,
  use: (db: Kysely<unknown>) => Promise<T>,
): Promise<T> {
  // Without a schema the plan's tables live in the connection's default one (search_path untouched).
  const pool = plan.schema
    ? createPool({ url: plan.url, schema: plan.schema, maxConnections: 1 })
    : guardPool(new Pool({ connectionString: plan.url, max: 1 }), 'migrations');
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
  try {
    return await use(db);
  } finally {
    await db.destroy();
  }
}
