import { newerMigrations, schemasOf } from './backup.manifest';

describe('backup manifest', () => {
  it('names the migrations of a backup that the target database does not know', () => {
    const backup = {
      'document_service.kysely_migration': ['20261122T1600_a', '20261201T0900_b'],
      'acl_service.kysely_migration': ['20261122T1600_c'],
      'public.kb_vectors_768_migration': ['20261122T1600_d'],
    };
    const target = {
      'document_service.kysely_migration': ['20261122T1600_a'],
      'acl_service.kysely_migration': ['20261122T1600_c', '20261130T0000_older_backup'],
    };
    expect(newerMigrations(backup, target)).toEqual([
      'document_service.kysely_migration: 20261201T0900_b',
    ]);
    expect(newerMigrations(backup, {})).toEqual([]);
  });

  it('lists the schemas a restore over a migrated database replaces, never public', () => {
    expect(
      schemasOf({
        'document_service.kysely_migration': [],
        'search_index.kysely_migration': [],
        'public.kb_vectors_384_migration': [],
      }),
    ).toEqual(['document_service', 'search_index']);
  });
});
