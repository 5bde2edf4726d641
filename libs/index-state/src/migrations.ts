import { sql, type Kysely, type Migration } from 'kysely';
import type { Migrations } from '@kb/database';

/**
 * The tables of the index state live in the lexical index's schema, where they were created
 * before they had a library of their own. They share its one migration history too:
 * indexing-service applies both libraries' migrations as one list (the names keep their order),
 * so a database migrated before the split sees nothing new.
 */
export const INDEX_STATE_SCHEMA = 'search_index';

/** One counter per tenant, bumped whenever its searchable content changes (cached results carry it). */
const generations: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`CREATE TABLE generations (tenant_id text PRIMARY KEY, generation bigint NOT NULL)`.execute(
      db,
    );
  },
};

/** Deleted documents, so a late `chunks embedded` event cannot bring one back into the index. */
const tombstones: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE tombstones (
        tenant_id text NOT NULL,
        document_id text NOT NULL,
        deleted_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, document_id)
      )`.execute(db);
  },
};

/**
 * The latest ACL of each document whose ACL changed, so a version indexed after the change (its
 * embeddings were in flight) gets the new principals, not those of its upload.
 */
const documentPrincipals: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE document_principals (
        tenant_id text NOT NULL,
        document_id text NOT NULL,
        principals text[] NOT NULL,
        PRIMARY KEY (tenant_id, document_id)
      )`.execute(db);
  },
};

/** The latest editable attributes of documents edited after upload (like `document_principals`). */
const documentAttributes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE document_attributes (
        tenant_id text NOT NULL,
        document_id text NOT NULL,
        attributes jsonb NOT NULL,
        PRIMARY KEY (tenant_id, document_id)
      )`.execute(db);
  },
};

/**
 * The newest version of each document the indexes hold: a late event of an older version (a
 * replay, a re-drive) must not replace a newer one.
 */
const indexedVersions: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE indexed_versions (
        tenant_id text NOT NULL,
        document_id text NOT NULL,
        version integer NOT NULL,
        PRIMARY KEY (tenant_id, document_id)
      )`.execute(db);
  },
};

/**
 * Which index spaces (one per pipeline, docs/adr/0012) hold a document, at which version and with
 * how many chunks: deletes and ACL changes reach every space, and a version counts as indexed
 * once every space of its pipelines holds it.
 */
const documentSpaces: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE document_spaces (
        tenant_id text NOT NULL,
        document_id text NOT NULL,
        space text NOT NULL,
        version integer NOT NULL,
        chunk_count integer NOT NULL,
        PRIMARY KEY (tenant_id, document_id, space)
      )`.execute(db);
    // Where a knowledge base's chunks are, and which model embedded them: what a search reads.
    await sql`
      CREATE TABLE knowledge_base_spaces (
        tenant_id text NOT NULL,
        knowledge_base_id text NOT NULL,
        space text NOT NULL,
        model text NOT NULL,
        PRIMARY KEY (tenant_id, knowledge_base_id)
      )`.execute(db);
  },
};

export const indexStateMigrations: Migrations = {
  '20261122T1900_generations': generations,
  '20261122T1910_tombstones': tombstones,
  '20261123T1010_document_principals': documentPrincipals,
  '20261123T1500_document_attributes': documentAttributes,
  '20261124T0900_indexed_versions': indexedVersions,
  '20261125T0900_document_spaces': documentSpaces,
};
