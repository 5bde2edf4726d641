import type { EditableAttributes, TenantId } from '@kb/contracts';
import type { Kysely } from 'kysely';

import type { DB } from './db.generated';
import type { RecordedAccess } from './document-index-state';

/**
 * The part of `PgDocumentIndexState` that records a document's principals and editable
 * attributes, each with the version that set them, so a late event cannot undo a newer one.
 */
export class PgRecordedAccess {
  constructor(private readonly db: Kysely<DB>) {}

  // A new row is not applied yet (-1); a stale version changes nothing and returns no row.
  async recordPrincipals(
    tenantId: TenantId,
    documentId: string,
    principals: string[],
    version?: number,
  ): Promise<boolean> {
    const row = await this.db
      .insertInto('document_principals')
      .values({
        tenant_id: tenantId,
        document_id: documentId,
        principals,
        version: version ?? 0,
        applied_version: -1,
      })
      .onConflict((oc) => {
        const update = oc.columns(['tenant_id', 'document_id']).doUpdateSet((eb) => ({
          principals: eb.ref('excluded.principals'),
          version: eb.fn<number>('greatest', ['document_principals.version', 'excluded.version']),
        }));
        return version === undefined
          ? update
          : update.where('document_principals.version', '<=', version);
      })
      .returning('version')
      .executeTakeFirst();
    return row !== undefined;
  }

  async markPrincipalsApplied(
    tenantId: TenantId,
    documentId: string,
    version?: number,
  ): Promise<void> {
    let update = this.db
      .updateTable('document_principals')
      .set((eb) => ({ applied_version: eb.ref('version') }))
      .where('tenant_id', '=', tenantId)
      .where('document_id', '=', documentId);
    if (version !== undefined) update = update.where('version', '=', version);
    await update.execute();
  }

  async accessStates(
    tenantId: TenantId,
    documentIds: string[],
  ): Promise<Map<string, RecordedAccess>> {
    const rows = await this.db
      .selectFrom('document_principals')
      .select(['document_id', 'principals', 'version', 'applied_version'])
      .where('tenant_id', '=', tenantId)
      .where((eb) => eb('document_id', '=', eb.fn.any(eb.val(documentIds))))
      .execute();
    return new Map(
      rows.map((row) => [
        row.document_id,
        {
          principals: row.principals,
          version: row.version,
          applied: row.applied_version === row.version,
        },
      ]),
    );
  }

  async principalsOf(tenantId: TenantId, documentId: string): Promise<string[] | undefined> {
    const row = await this.db
      .selectFrom('document_principals')
      .select('principals')
      .where('tenant_id', '=', tenantId)
      .where('document_id', '=', documentId)
      .executeTakeFirst();
    return row?.principals;
  }

  async recordAttributes(
    tenantId: TenantId,
    documentId: string,
    attributes: EditableAttributes,
    version?: number,
  ): Promise<boolean> {
    const row = await this.db
      .insertInto('document_attributes')
      .values({
        tenant_id: tenantId,
        document_id: documentId,
        attributes: JSON.stringify(attributes),
        version: version ?? 0,
      })
      .onConflict((oc) => {
        const update = oc.columns(['tenant_id', 'document_id']).doUpdateSet((eb) => ({
          attributes: eb.ref('excluded.attributes'),
          version: eb.fn<number>('greatest', ['document_attributes.version', 'excluded.version']),
        }));
        return version === undefined
          ? update
          : update.where('document_attributes.version', '<=', version);
      })
      .returning('version')
      .executeTakeFirst();
    return row !== undefined;
  }

  async attributesOf(
    tenantId: TenantId,
    documentId: string,
  ): Promise<EditableAttributes | undefined> {
    const row = await this.db
      .selectFrom('document_attributes')
      .select('attributes')
      .where('tenant_id', '=', tenantId)
      .where('document_id', '=', documentId)
      .executeTakeFirst();
    return row?.attributes;
  }
}
