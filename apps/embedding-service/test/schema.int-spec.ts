import { describeMigratedSchema } from '@kb/database/test/support/migrated-schema';

import { cacheMigrations } from '../src/migrations';

describeMigratedSchema('embedding-service cache', {
  migrations: cacheMigrations,
  types: { file: `${__dirname}/../src/platform/db.generated.ts` },
});
