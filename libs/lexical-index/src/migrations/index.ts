import type { Migrations } from '@kb/database';

import { createChunks } from './20261122T1700_create_chunks';
import { bm25Lengths } from './20261122T1800_bm25_lengths';
import { postings } from './20261122T1810_postings';
import { attributes } from './20261123T0900_attributes';
import { principals } from './20261123T1000_principals';
import { tenantLengths } from './20261123T1300_tenant_lengths';
import { dropTenantLengths } from './20261123T1310_drop_tenant_lengths';
import { chunkLocations } from './20261126T1000_chunk_locations';
import { bm25CoveringIndexes } from './20261129T1100_bm25_covering_indexes';
import { vacuumAfterInserts } from './20261130T1000_vacuum_after_inserts';
import { analyzeAfterWrites } from './20261130T1010_analyze_after_writes';

/**
 * Schema of the lexical index in the suite's Postgres; indexing-service applies its migrations,
 * in one history with those of `@kb/index-state`, whose tables share the schema.
 */
export const LEXICAL_SCHEMA = 'search_index';

/** The lexical index's migrations, in name order (applied by indexing-service with the index state's). */
export const lexicalIndexMigrations: Migrations = {
  '20261122T1700_create_chunks': createChunks,
  '20261122T1800_bm25_lengths': bm25Lengths,
  '20261122T1810_postings': postings,
  '20261123T0900_attributes': attributes,
  '20261123T1000_principals': principals,
  '20261123T1300_tenant_lengths': tenantLengths,
  '20261123T1310_drop_tenant_lengths': dropTenantLengths,
  '20261126T1000_chunk_locations': chunkLocations,
  '20261129T1100_bm25_covering_indexes': bm25CoveringIndexes,
  '20261130T1000_vacuum_after_inserts': vacuumAfterInserts,
  '20261130T1010_analyze_after_writes': analyzeAfterWrites,
};
