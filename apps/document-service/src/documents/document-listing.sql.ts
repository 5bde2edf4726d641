import type { DocumentFilterNode, TenantId } from '@kb/contracts';
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';

import type { DocumentDatabase } from '../platform/db.types';
import type { DocumentRecord } from './document.model';
import { documentFilterSql } from './document-filter.sql';
import { toRecord } from './document-row.mapper';
import type { ListingRead, Visibility } from './documents.repository';

/** The listing reads of `SqlDocumentsRepository`: pages by time and by external id. */

export async function listByExternalIdPrefix(
  db: Kysely<DocumentDatabase>,
  tenantId: TenantId,
  prefix: string,
  visibility: Visibility,
): Promise<DocumentRecord[]> {
  const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = await db
    .selectFrom('documents')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where(sql<boolean>`external_id LIKE ${pattern}`)
    .$call(visibleTo(visibility))
    .orderBy('external_id')
    .execute();
  return rows.map(toRecord);
}

export async function pageByExternalIdPrefix(
  db: Kysely<DocumentDatabase>,
  tenantId: TenantId,
  prefix: string,
  visibility: Visibility,
  limit: number,
  after?: string,
): Promise<DocumentRecord[]> {
  const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  let query = db
    .selectFrom('documents')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where(sql<boolean>`external_id LIKE ${pattern}`)
    .$call(visibleTo(visibility))
    // Byte order: the cursor compares as the page is sorted, whatever the database's collation.
    .orderBy(sql`external_id COLLATE "C"`)
    .limit(limit);
  if (after !== undefined) {
    query = query.where(sql<boolean>`external_id COLLATE "C" > ${after}`);
  }
  return (await query.execute()).map(toRecord);
}

export async function listDocuments(
  db: Kysely<DocumentDatabase>,
  tenantId: TenantId,
  limit: number,
  visibility: Visibility,
  after?: { createdAt: string; id: string },
  knowledgeBaseId?: string,
  filter?: DocumentFilterNode,
  read?: ListingRead,
): Promise<DocumentRecord[]> {
  let query = db
    .selectFrom('documents')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .$call(visibleTo(visibility))
    .where(documentFilterSql(filter))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit);
  if (knowledgeBaseId) {
    query = query.where(sql<boolean>`knowledge_base_ids @> ARRAY[${knowledgeBaseId}]::text[]`);
  }
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', new Date(after.createdAt)),
        eb.and([eb('created_at', '=', new Date(after.createdAt)), eb('id', '<', after.id)]),
      ]),
    );
  }
  if (!read) return (await query.execute()).map(toRecord);
  // The page and its audit record in one statement: a data-modifying CTE runs whether or not
  // the outer query reads it, and in the statement's own implicit transaction.
  const { message, served } = read;
  const rows = await db
    .with('page', () => query)
    .with('served', (db) =>
      db
        .selectFrom('page')
        .select(['id', 'created_at'])
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(served),
    )
    .with('audit', (db) =>
      db
        .insertInto('outbox')
        .columns(['topic', 'message_key', 'payload', 'headers'])
        .expression(
          db.selectFrom('served').select([
            sql<string>`${message.topic}::text`.as('topic'),
            sql<string>`CASE WHEN count(*) = 1 THEN min(id::text) ELSE ${message.key}::text END`.as(
              'message_key',
            ),
            sql<string>`jsonb_set(${message.payload}::jsonb, '{payload,documentIds}',
                coalesce(jsonb_agg(id ORDER BY created_at DESC, id DESC), '[]'::jsonb))::text`.as(
              'payload',
            ),
            sql<string>`${JSON.stringify(message.headers)}::jsonb`.as('headers'),
          ]),
        )
        .returning('id'),
    )
    .selectFrom('page')
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map(toRecord);
}

/** Restricts a query to the documents `visibility` allows. */
export function visibleTo(visibility: Visibility) {
  return <Q extends SelectQueryBuilder<DocumentDatabase, 'documents', object>>(query: Q): Q =>
    visibility === 'all'
      ? query
      : (query.where(sql<boolean>`principals && ${sql.val(visibility)}::text[]`) as Q);
}
