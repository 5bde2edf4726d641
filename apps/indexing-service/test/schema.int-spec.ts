import { describeMigratedSchema } from '@kb/database/test/support/migrated-schema';

import { searchIndexMigrations } from '../src/migrations';

// The lexical index and the index state are still queried with SQL over pg (ADR 38): no types.
describeMigratedSchema('indexing-service search_index', { migrations: searchIndexMigrations });
