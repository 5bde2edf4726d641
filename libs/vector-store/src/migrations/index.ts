import type { MigrationHistory, MigrationPlan, Migrations } from '@kb/database';

import { kbVectors } from './20261122T1530_kb_vectors';
import { kbVectorsAttributes } from './20261122T2220_kb_vectors_attributes';
import { kbVectorsPrincipals } from './20261122T2250_kb_vectors_principals';
import { kbVectorsPartitions, partitionFunction } from './20261127T1200_kb_vectors_partitions';

export { partitionFunction };

/** One table per dimension (`kb_vectors_384`), in the vector database's default schema. */
export function vectorTable(dimension: number): `kb_vectors_${number}` {
  if (!Number.isInteger(dimension) || dimension <= 0) throw new Error(`bad dimension ${dimension}`);
  return `kb_vectors_${dimension}`;
}

/**
 * The migrations of one dimension's table. Each file exports a factory of the table (and
 * dimension), since the same steps build every dimension's table.
 */
export function vectorTableMigrations(dimension: number): Migrations {
  const table = vectorTable(dimension);
  return {
    '20261122T1530_kb_vectors': kbVectors(table, dimension),
    '20261122T2220_kb_vectors_attributes': kbVectorsAttributes(table),
    '20261122T2250_kb_vectors_principals': kbVectorsPrincipals(table),
    '20261127T1200_kb_vectors_partitions': kbVectorsPartitions(table),
  };
}

/**
 * One history per dimension's table (`kb_vectors_384_migration`, lock `…_migration_lock`): a
 * dimension's table appears when its model is first used, so one history for all of them would
 * lack names another process applied, which Kysely refuses.
 */
export function vectorTableHistory(
  dimension: number,
): MigrationHistory & { migrations: Migrations } {
  return {
    table: `${vectorTable(dimension)}_migration`,
    migrations: vectorTableMigrations(dimension),
  };
}

/** What indexing-service's migrate applies for each dimension of VECTOR_DIMENSIONS. */
export function vectorMigrationPlan(url: string, dimension: number): MigrationPlan {
  return { url, ...vectorTableHistory(dimension) };
}
