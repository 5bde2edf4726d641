import {
  Topics,
  newEnvelope,
  type Pipeline,
  type PipelineDefaults,
  topicEventTypes,
  type DocumentMetadata,
  type DocumentStatus,
  type EditableAttributes,
  type FailureReason,
  type TenantId,
  type Topic,
  type TopicPayload,
} from '@kb/contracts';
import { captureTraceHeaders } from '@kb/observability';
import { Inject, Injectable } from '@nestjs/common';
import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { pipelinesOf } from '../knowledge-bases/pipelines';
import {
  sql,
  type Kysely,
  type Selectable,
  type SelectQueryBuilder,
  type Transaction,
} from 'kysely';
import type { DocumentDatabase, DocumentsTable } from '../platform/db.types';
import { DB } from '../platform/tokens';
import { principalsOf, type DocumentAcl, type DocumentView } from './document.model';

export interface NewDocument {
  id: string;
  tenantId: TenantId;
  title: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  blobBucket: string;
  blobKey: string;
  metadata: DocumentMetadata;
  tags: string[];
  knowledgeBaseIds: string[];
  ownerId: string;
  acl: DocumentAcl;
  now: Date;
}

/** A new version's content, already stored in S3. */
export interface NewContent {
  filename: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  blobBucket: string;
  blobKey: string;
  now: Date;
}

/** Which documents a caller may see: those granting one of `principals`, or all (`'all'`, admins). */
export type Visibility = string[] | 'all';

export interface StatusChange {
  documentId: string;
  version: number;
  status: DocumentStatus;
  reason?: FailureReason;
  detail?: string;
  chunkCount?: number;
  at: Date;
}

/** The only place with SQL for documents and the outbox. Every method takes the tenant. */
@Injectable()
export class DocumentsRepository {
  constructor(
    @Inject(DB) private readonly db: Kysely<DocumentDatabase>,
    @Inject(DOCUMENT_CONFIG)
    private readonly config: Pick<
      DocumentConfig,
      'EMBEDDING_MODEL' | 'S3_BUCKET' | 'CHUNK_SIZE' | 'CHUNK_OVERLAP'
    >,
  ) {}

  /** The pipeline of documents outside any configured knowledge base. */
  private get defaults(): PipelineDefaults {
    return {
      chunker: {
        strategy: 'recursive',
        size: this.config.CHUNK_SIZE,
        overlap: this.config.CHUNK_OVERLAP,
      },
      model: this.config.EMBEDDING_MODEL,
    };
  }

  /** The distinct pipelines of a document's knowledge bases (docs/adr/0012). */
  pipelinesOf(
    trx: Transaction<DocumentDatabase> | Kysely<DocumentDatabase>,
    row: Pick<Selectable<DocumentsTable>, 'tenant_id' | 'knowledge_base_ids'>,
  ): Promise<Pipeline[]> {
    return pipelinesOf(trx, row.tenant_id, row.knowledge_base_ids, this.defaults);
  }

  /**
   * After a membership change: when the document now needs a pipeline it was not indexed by, its
   * current version goes through the pipeline again (parse and embedding are cached, so only the
   * new pipeline's work is done). The `attributes_changed` event names the spaces it stays in.
   */
  private async redriveForNewPipelines(
    trx: Transaction<DocumentDatabase>,
    tenantId: string,
    id: string,
    before: Pipeline[],
  ): Promise<string[]> {
    const row = await trx
      .selectFrom('documents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const after = await this.pipelinesOf(trx, row);
    const known = new Set(before.map((p) => p.key));
    if (after.some((p) => !known.has(p.key))) {
      await enqueue(
        trx,
        Topics.document,
        tenantId,
        id,
        uploadedEventOf(row, this.config.S3_BUCKET, after),
      );
    }
    return after.map((p) => p.space);
  }

  /** Inserts the document and its `uploaded` event in one transaction (transactional outbox). */
  async insertWithEvent(doc: NewDocument): Promise<DocumentView> {
    return this.db.transaction().execute((trx) => this.insertIn(trx, doc));
  }

  /**
   * Inserts the document unless the tenant already has one with the same content that
   * `visibility` may read, which is returned instead. Concurrent uploads of the same content
   * serialize on a transaction-scoped advisory lock of (tenant, sha256), so two of them never
   * both become documents.
   */
  async insertUnlessDuplicate(
    doc: NewDocument,
    visibility: Visibility,
  ): Promise<{ document: DocumentView; duplicate: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${doc.tenantId}:${doc.sha256}`}, 0))`.execute(
        trx,
      );
      const existing = await trx
        .selectFrom('documents')
        .selectAll()
        .where('tenant_id', '=', doc.tenantId)
        .where('sha256', '=', doc.sha256)
        .$call(visibleTo(visibility))
        .orderBy('created_at')
        .executeTakeFirst();
      if (existing) return { document: toView(existing), duplicate: true };
      return { document: await this.insertIn(trx, doc), duplicate: false };
    });
  }

  private async insertIn(
    trx: Transaction<DocumentDatabase>,
    doc: NewDocument,
  ): Promise<DocumentView> {
    const knowledgeBaseIds = membershipOf(
      doc.knowledgeBaseIds,
      doc.tags,
      await tagRulesOf(trx, doc.tenantId),
    );
    const row = await trx
      .insertInto('documents')
      .values({
        id: doc.id,
        tenant_id: doc.tenantId,
        title: doc.title,
        filename: doc.filename,
        content_type: doc.contentType,
        size_bytes: doc.sizeBytes,
        sha256: doc.sha256,
        blob_key: doc.blobKey,
        version: 1,
        status: 'pending',
        metadata: JSON.stringify(doc.metadata),
        tags: doc.tags,
        knowledge_base_ids: knowledgeBaseIds,
        explicit_knowledge_base_ids: doc.knowledgeBaseIds,
        owner_id: doc.ownerId,
        acl: JSON.stringify(doc.acl),
        principals: principalsOf(doc.ownerId, doc.acl),
        stage_times: JSON.stringify({ pending: doc.now.toISOString() }),
        created_at: doc.now,
        updated_at: doc.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await enqueue(
      trx,
      Topics.document,
      doc.tenantId,
      doc.id,
      uploadedEventOf(row, doc.blobBucket, await this.pipelinesOf(trx, row)),
    );
    return toView(row);
  }

  /**
   * Makes `content` the document's next version: the row moves to version + 1, `pending`, and
   * its `uploaded` event is enqueued in the same transaction. The indexes keep serving the old
   * version until the new one is fully indexed. Undefined when the document is gone.
   */
  async replaceContentWithEvent(
    tenantId: TenantId,
    id: string,
    content: NewContent,
  ): Promise<{ document: DocumentView; previousSha256: string } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const previous = await trx
        .selectFrom('documents')
        .select('sha256')
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!previous) return undefined;
      const row = await trx
        .updateTable('documents')
        .set({
          version: sql<number>`version + 1`,
          status: 'pending',
          failure_reason: null,
          failure_detail: null,
          chunk_count: null,
          redrives: 0,
          filename: content.filename,
          content_type: content.contentType,
          size_bytes: content.sizeBytes,
          sha256: content.sha256,
          blob_key: content.blobKey,
          stage_times: JSON.stringify({ pending: content.now.toISOString() }),
          updated_at: content.now,
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await enqueue(
        trx,
        Topics.document,
        tenantId,
        id,
        uploadedEventOf(row, content.blobBucket, await this.pipelinesOf(trx, row)),
      );
      return { document: toView(row), previousSha256: previous.sha256 };
    });
  }

  /**
   * Brings documents' membership in line with the tag rules: every document whose knowledge
   * bases differ from its explicit ones plus those whose rule matches its tags is updated, and
   * its `attributes_changed` event enqueued (the indexes update in place). One tenant after a
   * rule changed (pass its transaction so the rule and the membership change together), or all
   * tenants (reconciliation). Returns the ids of the documents it changed.
   */
  async applyTagRules(
    now: Date,
    scope: { tenantId?: TenantId; trx?: Transaction<DocumentDatabase> } = {},
  ): Promise<string[]> {
    const run = async (trx: Transaction<DocumentDatabase>): Promise<string[]> => {
      const drifted = await sql<{
        tenant_id: string;
        id: string;
        tags: string[];
        metadata: DocumentMetadata;
        knowledge_base_ids: string[];
        explicit: string[];
        by_rule: string[];
      }>`
        WITH expected AS (
          SELECT d.tenant_id, d.id, d.tags, d.metadata, d.knowledge_base_ids,
                 d.explicit_knowledge_base_ids AS explicit,
                 ARRAY(SELECT k.id FROM knowledge_bases k
                       WHERE k.tenant_id = d.tenant_id AND k.tag_rule && d.tags
                       ORDER BY k.id) AS by_rule
          FROM documents d
          WHERE ${scope.tenantId ? sql`d.tenant_id = ${scope.tenantId}` : sql`true`}
        )
        SELECT tenant_id, id, tags, metadata, knowledge_base_ids, explicit, by_rule FROM expected
        WHERE NOT (knowledge_base_ids @> (explicit || by_rule)
                   AND (explicit || by_rule) @> knowledge_base_ids)
        ORDER BY tenant_id, id`.execute(trx);
      for (const doc of drifted.rows) {
        const knowledgeBaseIds = membershipOf(doc.explicit, doc.tags, [], doc.by_rule);
        const before = await pipelinesOf(trx, doc.tenant_id, doc.knowledge_base_ids, this.defaults);
        await trx
          .updateTable('documents')
          .set({ knowledge_base_ids: knowledgeBaseIds, updated_at: now })
          .where('tenant_id', '=', doc.tenant_id)
          .where('id', '=', doc.id)
          .execute();
        const spaces = await this.redriveForNewPipelines(trx, doc.tenant_id, doc.id, before);
        await enqueue(trx, Topics.document, doc.tenant_id, doc.id, {
          kind: 'attributes_changed',
          documentId: doc.id,
          attributes: { knowledgeBaseIds, tags: doc.tags, metadata: doc.metadata },
          spaces,
        });
      }
      return drifted.rows.map((doc) => doc.id);
    };
    return scope.trx ? run(scope.trx) : this.db.transaction().execute(run);
  }

  /** The tenant's document with this content, if any (duplicate detection). */
  async findBySha256(
    tenantId: TenantId,
    sha256: string,
    visibility: Visibility,
  ): Promise<DocumentView | undefined> {
    const row = await this.db
      .selectFrom('documents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('sha256', '=', sha256)
      .$call(visibleTo(visibility))
      .orderBy('created_at')
      .executeTakeFirst();
    return row ? toView(row) : undefined;
  }

  /** Deletes the row and enqueues its `deleted` event in one transaction; returns its content hash. */
  async deleteWithEvent(
    tenantId: TenantId,
    id: string,
  ): Promise<{ sha256: string; blobKey: string } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .deleteFrom('documents')
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .returning(['sha256', 'blob_key'])
        .executeTakeFirst();
      if (!row) return undefined;
      await enqueue(trx, Topics.document, tenantId, id, { kind: 'deleted', documentId: id });
      return { sha256: row.sha256, blobKey: row.blob_key };
    });
  }

  /**
   * Replaces who may read a document and enqueues `acl_changed` (the indexes update its chunks in
   * place) and an audit record, in one transaction.
   */
  async setAclWithEvent(
    tenantId: TenantId,
    id: string,
    acl: DocumentAcl,
    actor: string,
    now: Date,
  ): Promise<DocumentView | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const current = await trx
        .selectFrom('documents')
        .select('owner_id')
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!current) return undefined;
      const principals = principalsOf(current.owner_id, acl);
      const row = await trx
        .updateTable('documents')
        .set({ acl: JSON.stringify(acl), principals, updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await enqueue(trx, Topics.document, tenantId, id, {
        kind: 'acl_changed',
        documentId: id,
        principals,
      });
      await enqueue(trx, Topics.audit, tenantId, id, {
        actor,
        action: 'document_acl_changed',
        detail: JSON.stringify({ acl, principals }),
        documentIds: [id],
        chunks: [],
        at: now.toISOString(),
      });
      return toView(row);
    });
  }

  /**
   * Edits tags, metadata and knowledge bases and enqueues `attributes_changed` (the indexes update
   * the chunks in place; nothing is re-embedded), in one transaction.
   */
  async setAttributesWithEvent(
    tenantId: TenantId,
    id: string,
    edit: Partial<EditableAttributes>,
    now: Date,
  ): Promise<DocumentView | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const current = await trx
        .selectFrom('documents')
        .select(['tags', 'metadata', 'explicit_knowledge_base_ids', 'knowledge_base_ids'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!current) return undefined;
      const explicit = edit.knowledgeBaseIds ?? current.explicit_knowledge_base_ids;
      const tags = edit.tags ?? current.tags;
      const attributes: EditableAttributes = {
        tags,
        metadata: (edit.metadata ?? current.metadata) as DocumentMetadata,
        knowledgeBaseIds: membershipOf(explicit, tags, await tagRulesOf(trx, tenantId)),
      };
      const row = await trx
        .updateTable('documents')
        .set({
          tags: attributes.tags,
          metadata: JSON.stringify(attributes.metadata),
          knowledge_base_ids: attributes.knowledgeBaseIds,
          explicit_knowledge_base_ids: explicit,
          updated_at: now,
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      const before = await pipelinesOf(trx, tenantId, current.knowledge_base_ids, this.defaults);
      const spaces = await this.redriveForNewPipelines(trx, tenantId, id, before);
      await enqueue(trx, Topics.document, tenantId, id, {
        kind: 'attributes_changed',
        documentId: id,
        attributes,
        spaces,
      });
      return toView(row);
    });
  }

  /** Whether any document, in any tenant, still points at this content. */
  async isContentReferenced(sha256: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('documents')
      .select('id')
      .where('sha256', '=', sha256)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  async findById(
    tenantId: TenantId,
    id: string,
    visibility: Visibility,
  ): Promise<DocumentView | undefined> {
    const row = await this.db
      .selectFrom('documents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .$call(visibleTo(visibility))
      .executeTakeFirst();
    return row ? toView(row) : undefined;
  }

  async list(
    tenantId: TenantId,
    limit: number,
    visibility: Visibility,
    after?: { createdAt: string; id: string },
    knowledgeBaseId?: string,
  ): Promise<DocumentView[]> {
    let query = this.db
      .selectFrom('documents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .$call(visibleTo(visibility))
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
    return (await query.execute()).map(toView);
  }

  /**
   * Moves a document forward in the pipeline. Applies only to its current version and only when
   * the new status ranks above the current one, so replayed or late events change nothing.
   * A final status (`indexed`, `failed`) is never left. Returns whether a row changed.
   */
  async applyStatus(tenantId: TenantId, change: StatusChange, rank: number): Promise<boolean> {
    const result = await this.db
      .updateTable('documents')
      .set({
        status: change.status,
        failure_reason: change.reason ?? null,
        failure_detail: change.detail ?? null,
        chunk_count: change.chunkCount ?? sql<number | null>`chunk_count`,
        stage_times: sql<string>`stage_times || jsonb_build_object(${change.status}::text, ${change.at.toISOString()}::text)`,
        updated_at: change.at,
      })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', change.documentId)
      .where('version', '=', change.version)
      .where('status', 'not in', ['indexed', 'failed'])
      .where(
        sql<boolean>`(CASE status
          WHEN 'pending' THEN 0 WHEN 'parsing' THEN 1 WHEN 'embedding' THEN 2
          ELSE 3 END) < ${rank}`,
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}

async function enqueue<T extends Topic>(
  trx: Transaction<DocumentDatabase>,
  topic: T,
  tenantId: string,
  key: string,
  payload: TopicPayload<T>,
): Promise<void> {
  const envelope = newEnvelope(topicEventTypes[topic], tenantId, payload);
  await trx
    .insertInto('outbox')
    .values({
      topic,
      message_key: key,
      payload: JSON.stringify(envelope),
      headers: JSON.stringify(captureTraceHeaders()),
    })
    .execute();
}

/** A knowledge base's tag rule: documents with any of `anyOf` among their tags belong to it. */
export interface TagRule {
  knowledgeBaseId: string;
  anyOf: string[];
}

/** The tenant's tag rules (knowledge bases without one are left out). */
export async function tagRulesOf(
  trx: Transaction<DocumentDatabase>,
  tenantId: string,
): Promise<TagRule[]> {
  const rows = await trx
    .selectFrom('knowledge_bases')
    .select(['id', 'tag_rule'])
    .where('tenant_id', '=', tenantId)
    .where(sql<boolean>`cardinality(tag_rule) > 0`)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ knowledgeBaseId: row.id, anyOf: row.tag_rule }));
}

/**
 * A document's knowledge bases: the explicit ones first (the first decides how it is chunked),
 * then those whose tag rule matches its tags, each once.
 */
export function membershipOf(
  explicit: string[],
  tags: string[],
  rules: TagRule[],
  matched: string[] = rules
    .filter((rule) => rule.anyOf.some((tag) => tags.includes(tag)))
    .map((rule) => rule.knowledgeBaseId),
): string[] {
  return [...new Set([...explicit, ...matched])];
}

/** The `uploaded` event of a row's current version, as the pipeline receives it. */
export function uploadedEventOf(
  row: Selectable<DocumentsTable>,
  bucket: string,
  pipelines: Pipeline[],
): TopicPayload<typeof Topics.document> {
  const metadata = row.metadata as DocumentMetadata;
  return {
    kind: 'uploaded',
    documentId: row.id,
    version: row.version,
    filename: row.filename,
    contentType: row.content_type,
    sizeBytes: Number(row.size_bytes),
    sha256: row.sha256,
    blob: { bucket, key: row.blob_key },
    title: row.title,
    metadata,
    attributes: {
      knowledgeBaseIds: row.knowledge_base_ids,
      tags: row.tags,
      metadata,
      uploadedAt: new Date(row.created_at).getTime(),
      principals: row.principals,
    },
    pipelines,
  };
}

/** Restricts a query to the documents `visibility` allows. */
function visibleTo(visibility: Visibility) {
  return <Q extends SelectQueryBuilder<DocumentDatabase, 'documents', object>>(query: Q): Q =>
    visibility === 'all'
      ? query
      : (query.where(sql<boolean>`principals && ${sql.val(visibility)}::text[]`) as Q);
}

function toView(row: Selectable<DocumentsTable>): DocumentView {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    title: row.title,
    filename: row.filename,
    contentType: row.content_type,
    sizeBytes: Number(row.size_bytes),
    sha256: row.sha256,
    version: row.version,
    status: row.status as DocumentView['status'],
    failure: row.failure_reason
      ? { reason: row.failure_reason as FailureReason, detail: row.failure_detail }
      : null,
    chunkCount: row.chunk_count,
    metadata: row.metadata,
    tags: row.tags,
    knowledgeBaseIds: row.knowledge_base_ids,
    explicitKnowledgeBaseIds: row.explicit_knowledge_base_ids,
    ownerId: row.owner_id,
    acl: row.acl,
    stageTimes: row.stage_times,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
