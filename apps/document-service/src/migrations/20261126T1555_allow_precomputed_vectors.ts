import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Whether a knowledge base takes pre-computed vectors (`POST /v1/knowledge-bases/{id}/chunks`,
 * docs/adr/0033): off unless a tenant admin turns it on, existing knowledge bases included.
 */
export const allowPrecomputedVectors: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE knowledge_bases
      ADD COLUMN allow_precomputed_vectors boolean NOT NULL DEFAULT false`.execute(db);
  },
};
