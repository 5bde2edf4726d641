import { type MigrationPlan, type MigrationRunner, runMigrationPlans } from './migration-plan';

export interface MigrationsCliOptions {
  /** Named in the output, e.g. `acl-service`. */
  service: string;
  /** Built when the CLI runs, so a config error is reported like a migration error. */
  plans: () => MigrationPlan[];
  runner?: MigrationRunner;
  /** Where the summary goes; stdout by default. */
  print?: (line: string) => void;
}

/**
 * The body of every service's `src/migrate.ts` (`dist/migrate.js`): applies the service's plans
 * in order, prints one JSON line per plan, and exits non-zero on the first failure, which is
 * what `npm run migrate` and the Helm hook look at.
 */
export async function runMigrationsCli(options: MigrationsCliOptions): Promise<void> {
  const print = options.print ?? ((line: string) => console.log(line));
  try {
    const results = await runMigrationPlans(options.plans(), options.runner);
    for (const result of results) {
      print(JSON.stringify({ service: options.service, ...result }));
    }
  } catch (error) {
    console.error(`${options.service}: ${describeFailure(error)}`);
    process.exitCode = 1;
  }
}

function describeFailure(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
