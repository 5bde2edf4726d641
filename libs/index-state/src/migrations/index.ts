import type { Migrations } from '@kb/database';

import { generations } from './20261122T1900_generations';
import { tombstones } from './20261122T1910_tombstones';
import { documentPrincipals } from './20261123T1010_document_principals';
import { documentAttributes } from './20261123T1500_document_attributes';
import { indexedVersions } from './20261124T0900_indexed_versions';
import { documentSpaces } from './20261125T0900_document_spaces';
import { metaVersions } from './20261126T0900_meta_versions';
import { derivedCleanup } from './20261128T1000_derived_cleanup';

/**
 * The tables of the index state live in the lexical index's schema, where they were created
 * before they had a library of their own. They share its one migration history too:
 * indexing-service applies both libraries' migrations as one list (the names keep their order),
 * so a database migrated before the split sees nothing new.
 */
export const INDEX_STATE_SCHEMA = 'search_index';

/** The index state's migrations, in name order (applied by indexing-service with the lexical index's). */
export const indexStateMigrations: Migrations = {
  '20261122T1900_generations': generations,
  '20261122T1910_tombstones': tombstones,
  '20261123T1010_document_principals': documentPrincipals,
  '20261123T1500_document_attributes': documentAttributes,
  '20261124T0900_indexed_versions': indexedVersions,
  '20261125T0900_document_spaces': documentSpaces,
  '20261126T0900_meta_versions': metaVersions,
  '20261128T1000_derived_cleanup': derivedCleanup,
};
