import type { Migrations } from '@kb/database';
import { indexStateMigrations } from '@kb/index-state';
import { lexicalIndexMigrations } from '@kb/lexical-index';

/**
 * Schema `search_index` (`LEXICAL_SCHEMA`): the lexical index's tables and the index state's,
 * applied as one list. They were one list before the index state had a library of its own; Kysely
 * keeps one history per schema and refuses a list missing a name it applied, so the two stay
 * merged here.
 */
export const searchIndexMigrations: Migrations = {
  ...lexicalIndexMigrations,
  ...indexStateMigrations,
};
