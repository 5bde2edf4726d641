import { randomUUID } from 'node:crypto';

import type { Access } from '@kb/auth';
import type { TenantId } from '@kb/contracts';
import { annotateActiveSpan, meter, withKnowledgeBase } from '@kb/observability';
import type { BlobStore } from '@kb/storage';
import { Inject, Injectable } from '@nestjs/common';

import { requireDocumentAction } from '../access/document-actions';
import { ATTACHMENT_EXTERNAL_ID_PREFIX } from '../attachments/attachments.repository';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { KnowledgeBaseDirectory } from '../pipelines/knowledge-base-directory.port';
import { DEFAULT_KNOWLEDGE_BASE } from '../pipelines/pipeline.model';
import { BLOB_STORE, CLOCK, type Clock, QUOTA_CHECK } from '../platform/tokens';
import { TransactionRunner } from '../platform/transaction.runner';
import type { QuotaCheck } from '../usage/usage.service';
import {
  type DocumentView,
  type NewDocument,
  principalsOf,
  toView,
  type UploadFields,
  type VersionStart,
} from './document.model';
import { DocumentAudit } from './document-audit';
import {
  filenameOf,
  sha256OfFile,
  storeOriginal,
  type UploadedFile,
} from './document-content.storage';
import { requireFutureEnds } from './document-grants';
import { DocumentMembershipService } from './document-membership.service';
import { DocumentError, DocumentErrorCode } from './documents.errors';
import { DocumentsRepository, type Visibility, visibilityOf } from './documents.repository';
import { EditDocument } from './edit-document';
import { ReplaceDocumentContent } from './replace-document-content';

/**
 * The external-id prefix of documents a source sync brings (`source:<sourceId>/<path>`, ADR 26).
 * Reserved (review N13): only the sync, through `UploadOptions.sourceSync`, may write it.
 */
export const RESERVED_EXTERNAL_ID_PREFIX = 'source:';

/** How an internal caller uploads; never filled from a request. */
export interface UploadOptions {
  /**
   * The source sync (apps/document-service/src/sources) uploads: external ids under the reserved
   * `source:` prefix are allowed. Every other caller gets 400 `external_id_reserved` for them.
   */
  sourceSync?: boolean;
}

/**
 * The one answer for an external id the caller may not use, whatever the reason: a document the
 * caller cannot read holds it, or it is not a valid external id. It never says which, so it is
 * no oracle of unreadable documents (review N13, docs/adr/0032).
 */
function unusableExternalId(externalId: string): DocumentError {
  return new DocumentError(
    DocumentErrorCode.InvalidExternalId,
    `external id "${externalId}" cannot be used; choose another`,
  );
}

/** Valid as `externalIdSchema` (document-fields.ts) says, for callers that bypass the schema. */
const isValidExternalId = (externalId: string): boolean =>
  externalId.length >= 1 && externalId.length <= 1024 && !/[\u0000-\u001f\u007f]/.test(externalId);

/** Whether a document granting `principals` is one `visibility` may read. */
const isVisible = (visibility: Visibility, principals: string[]): boolean =>
  visibility === 'all' || principals.some((p) => visibility.includes(p));

/** The service's own rules for an external id: valid, and not reserved unless a sync uploads. */
function checkExternalId(externalId: string, options: UploadOptions): void {
  if (!isValidExternalId(externalId)) throw unusableExternalId(externalId);
  // A mail's attachment documents' (docs/adr/0048): only document-service makes them.
  if (externalId.startsWith(ATTACHMENT_EXTERNAL_ID_PREFIX)) {
    throw new DocumentError(
      DocumentErrorCode.ExternalIdReserved,
      `external ids starting "${ATTACHMENT_EXTERNAL_ID_PREFIX}" are reserved for mail attachments`,
    );
  }
  if (externalId.startsWith(RESERVED_EXTERNAL_ID_PREFIX) && !options.sourceSync) {
    throw new DocumentError(
      DocumentErrorCode.ExternalIdReserved,
      `external ids starting "${RESERVED_EXTERNAL_ID_PREFIX}" are reserved for source syncs`,
    );
  }
}

const uploads = meter().createCounter('kb_documents_uploaded_total', {
  description: 'Uploads, by outcome (created or duplicate) and knowledge base',
});

/** Counted under the knowledge bases the upload names (`_multiple` for several; ADR 41). */
const countUpload = (outcome: 'created' | 'duplicate', fields: UploadFields): void =>
  uploads.add(1, withKnowledgeBase({ outcome }, fields.knowledgeBaseIds ?? DEFAULT_KNOWLEDGE_BASE));

/**
 * `POST /v1/documents` and the uploads of sources and pre-computed chunks: a new document, the
 * next version of the one holding the external id, or the caller's readable duplicate.
 */
@Injectable()
export class UploadDocument {
  constructor(
    private readonly documents: DocumentsRepository,
    private readonly membership: DocumentMembershipService,
    private readonly knowledgeBases: KnowledgeBaseDirectory,
    private readonly transactions: TransactionRunner,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly audit: DocumentAudit,
    private readonly replacer: ReplaceDocumentContent,
    private readonly editor: EditDocument,
    @Inject(QUOTA_CHECK) private readonly quotas: QuotaCheck,
  ) {}

  /**
   * Stores the original in S3, then the row and its event in one transaction. An external id
   * under the reserved `source:` prefix is 400 `external_id_reserved` unless `options.sourceSync`
   * (the source sync only).
   */
  async upload(
    tenantId: TenantId,
    access: Access,
    file: UploadedFile,
    fields: UploadFields,
    start?: VersionStart,
    options: UploadOptions = {},
  ): Promise<DocumentView> {
    requireDocumentAction(access, 'write');
    if (fields.externalId !== undefined) checkExternalId(fields.externalId, options);
    if (fields.acl) requireFutureEnds(fields.acl, this.clock());
    await this.knowledgeBases.requireExisting(tenantId, fields.knowledgeBaseIds ?? []);
    if (file.size === 0) {
      throw new DocumentError(DocumentErrorCode.EmptyFile, `file "${file.originalname}" is empty`);
    }
    if (fields.externalId) {
      // The client's id is the document's identity: the same one again is its next version.
      const named = await this.documents.findByExternalId(tenantId, fields.externalId);
      if (named) return this.newVersionOf(tenantId, access, named, file, fields, start);
      return this.uploadNew(tenantId, access, file, fields, await sha256OfFile(file.path), start);
    }
    const sha256 = await sha256OfFile(file.path);
    // Only a document the caller can read counts as a duplicate: otherwise its existence would
    // leak. Checked here for the common case, and again under a lock when inserting.
    const existing = await this.documents.findBySha256(tenantId, sha256, visibilityOf(access));
    if (existing) {
      countUpload('duplicate', fields);
      return { ...toView(existing), duplicate: true };
    }
    return this.uploadNew(tenantId, access, file, fields, sha256, start);
  }

  /**
   * The document holding `externalId` gets `file` as its next version (or stays, `unchanged`,
   * when the content is its current one); title, tags, metadata and knowledge bases given with
   * it are applied as an edit. A document the caller cannot read answers as an unusable id
   * (400 `invalid_external_id`), never "taken": that would reveal it (review N13).
   */
  private async newVersionOf(
    tenantId: TenantId,
    access: Access,
    named: { id: string; principals: string[] },
    file: UploadedFile,
    fields: UploadFields,
    start?: VersionStart,
  ): Promise<DocumentView & { unchanged?: true }> {
    const visibility = visibilityOf(access);
    if (!isVisible(visibility, named.principals)) throw unusableExternalId(fields.externalId!);
    const replaced = await this.replacer.replace(tenantId, access, named.id, file, start);
    const edit = {
      ...(fields.tags ? { tags: [...new Set(fields.tags)] } : {}),
      ...(fields.metadata ? { metadata: fields.metadata } : {}),
      ...(fields.knowledgeBaseIds
        ? { knowledgeBaseIds: [...new Set(fields.knowledgeBaseIds)] }
        : {}),
    };
    const differs =
      (edit.tags && JSON.stringify(edit.tags) !== JSON.stringify(replaced.tags)) ||
      (edit.metadata && JSON.stringify(edit.metadata) !== JSON.stringify(replaced.metadata)) ||
      (edit.knowledgeBaseIds &&
        JSON.stringify(edit.knowledgeBaseIds) !==
          JSON.stringify(replaced.explicitKnowledgeBaseIds));
    if (!differs) return replaced;
    const edited = await this.editor.edit(tenantId, access, named.id, edit);
    return replaced.unchanged ? { ...edited, unchanged: true } : edited;
  }

  private async uploadNew(
    tenantId: TenantId,
    access: Access,
    file: UploadedFile,
    fields: UploadFields,
    sha256: string,
    start?: VersionStart,
  ): Promise<DocumentView> {
    // Before anything is stored: a refused upload leaves nothing behind (docs/adr/0053).
    const knowledgeBaseIds = [...new Set(fields.knowledgeBaseIds ?? [DEFAULT_KNOWLEDGE_BASE])];
    await this.quotas.beforeUpload(tenantId, knowledgeBaseIds, file.size);
    const blobKey = await storeOriginal(this.blobs, tenantId, file, sha256);
    const { document, duplicate } = await this.register(
      {
        id: randomUUID(),
        tenantId,
        title: fields.title?.trim() || filenameOf(file),
        filename: filenameOf(file),
        contentType: file.mimetype || 'application/octet-stream',
        sizeBytes: file.size,
        sha256,
        blobKey,
        metadata: fields.metadata ?? {},
        tags: [...new Set(fields.tags ?? [])],
        knowledgeBaseIds,
        ownerId: access.userId,
        acl: fields.acl ?? { users: [], groups: [], roles: [], tenant: false },
        ...(fields.externalId ? { externalId: fields.externalId } : {}),
        now: this.clock(),
      },
      visibilityOf(access),
      start,
    );
    annotateActiveSpan({ 'kb.tenant_id': tenantId, 'kb.document_id': document.id });
    if (duplicate) {
      // Lost the race to a concurrent upload of the same content: that one is the document.
      countUpload('duplicate', fields);
      return { ...document, duplicate: true };
    }
    countUpload('created', fields);
    return document;
  }

  /**
   * Inserts the document and its `uploaded` event in one transaction (transactional outbox),
   * unless the tenant already has one with the same content that `visibility` may read, which is
   * returned instead. Concurrent uploads of the same content serialize on a lock of (tenant,
   * sha256), so two of them never both become documents.
   */
  async register(
    doc: NewDocument,
    visibility: Visibility,
    start?: VersionStart,
  ): Promise<{ document: DocumentView; duplicate: boolean }> {
    const registered = await this.transactions.run(async (trx) => {
      // A document with an external id is its own identity: identical content is no duplicate.
      // Concurrent uploads of one external id serialize here; the unique index is the backstop.
      const lock = doc.externalId ? `external:${doc.externalId}` : doc.sha256;
      await this.documents.lockContent(trx, doc.tenantId, lock);
      if (doc.externalId) {
        const named = await this.documents.findByExternalId(doc.tenantId, doc.externalId, trx);
        if (named && !isVisible(visibility, named.principals)) {
          throw unusableExternalId(doc.externalId);
        }
        if (named) {
          throw new DocumentError(
            DocumentErrorCode.ExternalIdTaken,
            `external id "${doc.externalId}" was taken by a concurrent upload; retry`,
          );
        }
      } else {
        const existing = await this.documents.findBySha256(
          doc.tenantId,
          doc.sha256,
          visibility,
          trx,
        );
        if (existing) return { document: existing, duplicate: true };
      }
      const document = await this.documents.insert(trx, {
        ...doc,
        knowledgeBaseIds: await this.membership.membershipOf(
          trx,
          doc.tenantId,
          doc.knowledgeBaseIds,
          doc.tags,
        ),
        explicitKnowledgeBaseIds: doc.knowledgeBaseIds,
        principals: principalsOf(doc.ownerId, doc.acl),
      });
      await (start ?? this.membership.sendThroughPipelines.bind(this.membership))(trx, document);
      const actor = { tenantId: doc.tenantId, userId: doc.ownerId };
      await this.audit.record(
        trx,
        'document_uploaded',
        actor,
        [document.id],
        { version: document.version },
        doc.knowledgeBaseIds,
      );
      return { document, duplicate: false };
    });
    if (!registered.duplicate) this.outbox.wake();
    return { document: toView(registered.document), duplicate: registered.duplicate };
  }
}
