import { describeMigratedSchema } from '@kb/database/test/support/migrated-schema';

import { lexicalIndexMigrations } from '../src/migrations';

/** The `tenant_id` columns hold the index space (they predate pipelines); JSON is written as text. */
const overrides = {
  'chunks.tenant_id': 'IndexSpace',
  'postings.tenant_id': 'IndexSpace',
  'chunks.metadata': 'ColumnType<Record<string, MetadataValue>, string | undefined, string>',
};

describeMigratedSchema('lexical-index', {
  migrations: lexicalIndexMigrations,
  types: {
    file: `${__dirname}/../src/db.generated.ts`,
    overrides,
    imports: { IndexSpace: '@kb/contracts', MetadataValue: '@kb/contracts' },
  },
});
