import { describeMigratedSchema } from '@kb/database/test/support/migrated-schema';

import { indexStateMigrations } from '../src/migrations';

/** Tenants, spaces and the attributes JSON typed as the code reads and writes them (JSON as text). */
const overrides = {
  'generations.tenant_id': 'TenantId',
  'derived_cleanup.tenant_id': 'TenantId',
  // The column predates pipelines: it holds the index space.
  'indexed_versions.tenant_id': 'IndexSpace',
  'document_spaces.space': 'IndexSpace',
  'knowledge_base_spaces.space': 'IndexSpace',
  'document_attributes.attributes': 'ColumnType<EditableAttributes, string, string>',
};

describeMigratedSchema('index-state', {
  migrations: indexStateMigrations,
  types: {
    file: `${__dirname}/../src/db.generated.ts`,
    overrides,
    imports: {
      TenantId: '@kb/contracts',
      IndexSpace: '@kb/contracts',
      EditableAttributes: '@kb/contracts',
    },
  },
});
