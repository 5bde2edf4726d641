import { describeMigratedSchema } from '@kb/database/test/support/migrated-schema';

import { vectorTableMigrations } from '../src/migrations';

/**
 * Every dimension's table (`kb_vectors_<dimension>`) is built by the same migrations: the types
 * are generated from the 384 one and type the whole family (`VectorTableName` in the store).
 */
describeMigratedSchema('pgvector kb_vectors_384', {
  migrations: vectorTableMigrations(384),
  url: process.env['VECTOR_DATABASE_URL']!,
  types: {
    file: `${__dirname}/../src/db.generated.ts`,
    overrides: {
      'kb_vectors_384.metadata': 'ColumnType<Record<string, unknown>, string | undefined, string>',
    },
  },
});
