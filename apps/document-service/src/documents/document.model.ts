import {
  attachmentSkipReasonSchema,
  type DocumentMetadata,
  documentMetadataSchema,
  type DocumentStatus,
  documentStatusSchema,
  type FailureReason,
  failureReasonSchema,
  type PiiSummary,
  piiSummarySchema,
  type TenantId,
} from '@kb/contracts';
import { z } from 'zod';

import type { Trx } from '../platform/transaction.runner';
import { type DocumentAcl, documentAclSchema } from './document-acl';

export {
  type DocumentAcl,
  documentAclSchema,
  granteePrincipals,
  type Grantees,
  principalsOf,
} from './document-acl';

export const DOCUMENT_STATES = ['active', 'inactive'] as const;
export type DocumentState = (typeof DOCUMENT_STATES)[number];

/** A document as the API shows it. */
export interface DocumentView {
  id: string;
  tenantId: string;
  title: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  version: number;
  status: DocumentStatus;
  failure: { reason: FailureReason; detail: string | null } | null;
  chunkCount: number | null;
  metadata: DocumentMetadata;
  tags: string[];
  /**
   * The knowledge bases the document belongs to: those named for it (`explicitKnowledgeBaseIds`,
   * `default` unless the upload named others) plus those whose tag rule matches its tags.
   */
  knowledgeBaseIds: string[];
  explicitKnowledgeBaseIds: string[];
  /** The uploader; always able to read the document and change its ACL. */
  ownerId: string;
  acl: DocumentAcl;
  /** When each pipeline status was reached for the current version. */
  stageTimes: Partial<Record<DocumentStatus, string>>;
  /** The client's own id for the document, unique in the tenant (ADR 25); null when none. */
  externalId: string | null;
  /** `inactive`: kept in the indexes but never found by search, until active again (ADR 25). */
  state: DocumentState;
  /** When retention deletes it (docs/adr/0052), unless a hold covers it; absent when never. */
  expiresAt?: string;
  createdAt: string;
  updatedAt: string;
  /** Set on an upload answered with an existing document of the same content. */
  duplicate?: true;
  /** Set on new content for a document that already held it (its external id's, or a PUT). */
  unchanged?: true;
  /**
   * Personal data and secrets the parser found in the current version, counted by type, when its
   * knowledge bases look for them (docs/adr/0051); absent when nothing was looked for.
   */
  pii?: PiiSummary;
  /** The mail this document was attached to (docs/adr/0048); absent for any other document. */
  attachedTo?: string;
  /** A mail's attachments (GET of one document only): the documents made of them, and the skipped. */
  attachments?: AttachmentsView;
}

/** What became of a mail's attachments (docs/adr/0048). */
export interface AttachmentsView {
  documents: Array<{ id: string; filename: string; status: DocumentStatus }>;
  skipped: SkippedAttachment[];
}
export type SkippedAttachment = z.infer<typeof skippedAttachmentSchema>;

/** A document as stored: what the repositories answer, with what the API does not show. */
export interface DocumentRecord {
  id: string;
  tenantId: TenantId;
  title: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  blobKey: string;
  version: number;
  status: DocumentStatus;
  failure: { reason: FailureReason; detail: string | null } | null;
  chunkCount: number | null;
  metadata: DocumentMetadata;
  tags: string[];
  knowledgeBaseIds: string[];
  explicitKnowledgeBaseIds: string[];
  ownerId: string;
  acl: DocumentAcl;
  /** The owner's and the ACL's principals (`principalsOf`): who may read it. */
  principals: string[];
  /** Pipeline statuses, and reconciliation's re-drives (`redriven_<n>`), with when they happened. */
  stageTimes: Record<string, string>;
  /** Times reconciliation sent the current version through the pipeline again. */
  redrives: number;
  /** Moved on by every ACL, attribute or membership change; its events carry it (ADR 18). */
  metaVersion: number;
  externalId: string | null;
  inactive: boolean;
  /** Its own retention date (docs/adr/0052); null or absent when none. */
  expiresAt?: Date | null;
  /** What the parser found in the current version, by type; null or absent: not looked for. */
  piiFindings?: PiiSummary | null;
  /** The mail it was attached to; null or absent for any other document. */
  attachedTo?: string | null;
  /** A mail's attachments its current version skipped; null or absent: none reported. */
  attachmentsSkipped?: SkippedAttachment[] | null;
  createdAt: Date;
  updatedAt: Date;
}

export function toView(document: DocumentRecord): DocumentView {
  return {
    id: document.id,
    tenantId: document.tenantId,
    title: document.title,
    filename: document.filename,
    contentType: document.contentType,
    sizeBytes: document.sizeBytes,
    sha256: document.sha256,
    version: document.version,
    status: document.status,
    failure: document.failure,
    chunkCount: document.chunkCount,
    metadata: document.metadata,
    tags: document.tags,
    knowledgeBaseIds: document.knowledgeBaseIds,
    explicitKnowledgeBaseIds: document.explicitKnowledgeBaseIds,
    ownerId: document.ownerId,
    acl: document.acl,
    stageTimes: document.stageTimes,
    externalId: document.externalId,
    state: document.inactive ? 'inactive' : 'active',
    ...(document.expiresAt ? { expiresAt: document.expiresAt.toISOString() } : {}),
    createdAt: document.createdAt.toISOString(),
    updatedAt: document.updatedAt.toISOString(),
    ...(document.piiFindings ? { pii: document.piiFindings } : {}),
    ...(document.attachedTo ? { attachedTo: document.attachedTo } : {}),
  };
}

export interface UploadFields {
  title?: string;
  acl?: DocumentAcl;
  metadata?: DocumentMetadata;
  tags?: string[];
  knowledgeBaseIds?: string[];
  externalId?: string;
}

/** A new document: content already stored in S3, knowledge bases as the uploader named them. */
export interface NewDocument {
  id: string;
  tenantId: TenantId;
  title: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  blobKey: string;
  metadata: DocumentMetadata;
  tags: string[];
  knowledgeBaseIds: string[];
  ownerId: string;
  acl: DocumentAcl;
  externalId?: string;
  now: Date;
}

export interface DocumentPage {
  items: DocumentView[];
  nextCursor: string | null;
}

/** What a delete removed here; the indexes drop the document's chunks asynchronously. */
export interface DeleteResult {
  documentId: string;
  /**
   * False when another document still uses the same content. Told to tenant admins only: anyone
   * else could learn that a document they cannot read holds the same bytes.
   */
  blobDeleted?: boolean;
  /** Vectors and lexical rows are removed by indexing-service when it receives the event. */
  indexRemoval: 'scheduled';
  /** A mail's attachment documents deleted with it, and those a legal hold kept (ADR 48, 52). */
  attachments?: { deleted: string[]; held: Array<{ documentId: string; hold: string }> };
}

/**
 * Pipeline order, stated once: a status event moves a document forward only, so replays and
 * reordering are harmless. The SQL guard in `DocumentsRepository.applyStatus` is built from it.
 */
export const STATUS_RANK: Record<DocumentStatus, number> = {
  pending: 0,
  parsing: 1,
  embedding: 2,
  indexing: 3,
  indexed: 4,
  failed: 5,
};

/** Statuses a document never leaves (for its current version). */
export const FINAL_STATUSES = ['indexed', 'failed'] as const satisfies readonly DocumentStatus[];

export function isFinal(status: DocumentStatus): boolean {
  return (FINAL_STATUSES as readonly DocumentStatus[]).includes(status);
}

/**
 * How a new document version enters the pipelines, in its transaction: by default its `uploaded`
 * event (parse, chunk, embed, index); pre-computed chunks go straight to indexing instead.
 */
export type VersionStart = (trx: Trx, document: DocumentRecord) => Promise<void>;

const skippedAttachmentSchema = z.object({
  index: z.number().int(),
  filename: z.string(),
  reason: attachmentSkipReasonSchema,
});

/** A document as the API shows it (`DocumentView`), for the OpenAPI document. */
export const documentViewSchema = z.object({
  id: z.uuid(),
  tenantId: z.string(),
  title: z.string(),
  filename: z.string(),
  contentType: z.string(),
  sizeBytes: z.number().int(),
  sha256: z.string(),
  version: z.number().int(),
  status: documentStatusSchema,
  failure: z.object({ reason: failureReasonSchema, detail: z.string().nullable() }).nullable(),
  chunkCount: z.number().int().nullable(),
  metadata: documentMetadataSchema,
  tags: z.array(z.string()),
  knowledgeBaseIds: z.array(z.string()),
  explicitKnowledgeBaseIds: z.array(z.string()),
  ownerId: z.string(),
  acl: documentAclSchema,
  stageTimes: z.partialRecord(documentStatusSchema, z.string()),
  externalId: z.string().nullable(),
  state: z.enum(DOCUMENT_STATES),
  expiresAt: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  duplicate: z.literal(true).optional(),
  unchanged: z.literal(true).optional(),
  pii: piiSummarySchema
    .optional()
    .describe('PII found in the current version, counted by type (knowledge-base setting pii)'),
  attachedTo: z.uuid().optional().describe('The mail this document was attached to'),
  attachments: z
    .object({
      documents: z.array(
        z.object({ id: z.uuid(), filename: z.string(), status: documentStatusSchema }),
      ),
      skipped: z.array(skippedAttachmentSchema),
    })
    .optional()
    .describe("A mail's attachments: their documents, and those skipped with why"),
});

export const documentPageSchema = z.object({
  items: z.array(documentViewSchema),
  nextCursor: z.string().nullable(),
});

export const deleteResultSchema = z.object({
  documentId: z.uuid(),
  blobDeleted: z.boolean().optional(),
  indexRemoval: z.literal('scheduled'),
  attachments: z
    .object({
      deleted: z.array(z.uuid()),
      held: z.array(z.object({ documentId: z.uuid(), hold: z.string() })),
    })
    .optional(),
});

// The views are TypeScript interfaces; these lines stop the schemas drifting from them.
const documentViewMatches: z.input<typeof documentViewSchema> = {} as DocumentView;
const documentPageMatches: z.input<typeof documentPageSchema> = {} as DocumentPage;
void [documentViewMatches, documentPageMatches];
