import { PgLexicalIndex } from '../../src';

/**
 * Postgres stands in for indexing-service here: every write through this index moves the
 * generation on, as indexing-service bumps it after each write it makes.
 */
export class BumpingPgIndex extends PgLexicalIndex {
  generation = 0;

  override async upsert(...args: Parameters<PgLexicalIndex['upsert']>): Promise<void> {
    await super.upsert(...args);
    this.generation++;
  }

  override async deleteDocument(...args: Parameters<PgLexicalIndex['deleteDocument']>) {
    return this.bumped(super.deleteDocument(...args));
  }

  override async deleteDocuments(...args: Parameters<PgLexicalIndex['deleteDocuments']>) {
    return this.bumped(super.deleteDocuments(...args));
  }

  override async setAttributes(...args: Parameters<PgLexicalIndex['setAttributes']>) {
    return this.bumped(super.setAttributes(...args));
  }

  override async setPrincipals(...args: Parameters<PgLexicalIndex['setPrincipals']>) {
    return this.bumped(super.setPrincipals(...args));
  }

  private async bumped(write: Promise<number>): Promise<number> {
    const count = await write;
    this.generation++;
    return count;
  }
}
