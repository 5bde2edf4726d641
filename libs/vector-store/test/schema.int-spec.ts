import { describeMigratedSchema } from '@kb/database/test/support/migrated-schema';

import { vectorTableMigrations } from '../src/migrations';

// pgvector's tables are written with SQL over pg (ADR 38): the dating rule only, no types.
describeMigratedSchema('pgvector kb_vectors_384', {
  migrations: vectorTableMigrations(384),
  url: process.env['VECTOR_DATABASE_URL']!,
});
