import { runMigrationsCli } from './migrate.cli';
import type { MigrationPlan, MigrationRunner } from './migration-plan';

const runner = (applied: string[]): MigrationRunner => ({
  migrate: async () => applied,
  pending: async () => [],
});
const plans = (): MigrationPlan[] => [
  { url: 'postgres://fake/db', schema: 'acl_service', migrations: {} },
];

describe('runMigrationsCli', () => {
  afterEach(() => {
    process.exitCode = undefined;
    jest.restoreAllMocks();
  });

  it('prints one JSON line per plan with the service and what was applied', async () => {
    const lines: string[] = [];
    await runMigrationsCli({
      service: 'acl-service',
      plans,
      runner: runner(['20261123T1100_acl_tables']),
      print: (line) => lines.push(line),
    });
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      {
        service: 'acl-service',
        history: 'schema acl_service',
        applied: ['20261123T1100_acl_tables'],
      },
    ]);
    expect(process.exitCode).toBeUndefined();
  });

  it('sets a failing exit code when the config or a migration fails', async () => {
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    await runMigrationsCli({
      service: 'acl-service',
      plans: () => {
        throw new Error('DATABASE_URL: Invalid URL');
      },
      runner: runner([]),
      print: () => undefined,
    });
    expect(process.exitCode).toBe(1);
    expect(String(error.mock.calls[0]?.[0])).toContain('acl-service: Error: DATABASE_URL');
  });
});
