import { describeMigratedSchema } from '@kb/database/test/support/migrated-schema';

import { migrations } from '../src/migrations';

describeMigratedSchema('webhook-service', {
  migrations,
  types: { file: `${__dirname}/../src/platform/db.generated.ts` },
});
