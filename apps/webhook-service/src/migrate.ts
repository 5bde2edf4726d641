import { runMigrationsCli } from '@kb/database';

import { loadMigrationConfig, migrationPlans } from './migrations';

/** Applies this service's migrations and exits: run by `npm run migrate` and the Helm hook. */
void runMigrationsCli({
  service: 'webhook-service',
  plans: () => migrationPlans(loadMigrationConfig()),
});
