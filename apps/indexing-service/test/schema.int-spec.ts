import { describeMigratedSchema } from '@kb/database/test/support/migrated-schema';

import { searchIndexMigrations } from '../src/migrations';

// The merged list's dating rule. The types of the two libraries' tables are generated and checked
// by their own schema specs (libs/lexical-index and libs/index-state, test/schema.int-spec.ts).
describeMigratedSchema('indexing-service search_index', { migrations: searchIndexMigrations });
