import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Whether `/v1/context` over a knowledge base reranks with the cross-encoder when the call does
 * not say (docs/adr/0047): off, existing knowledge bases included.
 */
export const contextRerank: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE knowledge_bases
      ADD COLUMN context_rerank boolean NOT NULL DEFAULT false`.execute(db);
  },
};
