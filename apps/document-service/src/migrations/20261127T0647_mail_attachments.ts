import { type Kysely, type Migration, sql } from 'kysely';

/**
 * A mail's attachments as documents of their own (docs/adr/0048): each names the mail it came
 * from (`attached_to`; they are found by their external ids, `attachment:<mail>:…`, whose unique
 * index exists), and the mail keeps the attachments its current version skipped, with why (null:
 * none reported yet).
 */
export const mailAttachments: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE documents ADD COLUMN attached_to uuid`.execute(db);
    await sql`ALTER TABLE documents ADD COLUMN attachments_skipped jsonb`.execute(db);
  },
};
