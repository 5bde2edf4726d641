import { z } from 'zod';

import { documentAttributesSchema } from '../document';
import { piiSummarySchema } from '../pii';
import { pipelineRefSchema, pipelineSchema } from '../pipeline';
import { embeddedChunksSchema, parsedDocumentSchema } from './chunk';

/** A stored object: payloads too large for a Kafka message travel by reference (claim check). */
export const blobRefSchema = z.object({
  bucket: z.string().min(1),
  key: z.string().min(1),
});
export type BlobRef = z.infer<typeof blobRefSchema>;

/**
 * A payload carried in the event itself when it is small, by reference when it is not (claim
 * check). Most documents' chunks and vectors fit in a few kilobytes: carrying them saves a PUT and
 * a GET per stage (docs/adr/0004). Events written before `inline` existed hold a `BlobRef`.
 */
export const inlineOrRefSchema = <T extends z.ZodType>(inline: T) =>
  z.union([blobRefSchema, z.object({ inline })]);
export type InlineOrRef<T> = BlobRef | { inline: T };

export const documentUploadedSchema = z.object({
  documentId: z.uuid(),
  version: z.number().int().positive(),
  filename: z.string(),
  contentType: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[a-f0-9]{64}$/),
  blob: blobRefSchema,
  title: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  /** What every chunk carries for filters; absent in events written before it existed. */
  attributes: documentAttributesSchema.prefault({}),
  /** The distinct pipelines (chunker, model) of its knowledge bases (docs/adr/0012). */
  pipelines: z.array(pipelineSchema).min(1),
  /**
   * The mail this document was attached to (docs/adr/0048): the parser reads no attachments of
   * an attachment, so nested mails go one level deep. Absent for every other document.
   */
  attachedTo: z.uuid().optional(),
});
export type DocumentUploaded = z.infer<typeof documentUploadedSchema>;

/**
 * A document's meta version (docs/adr/0018): document-service moves it on with every ACL change,
 * attribute or membership change and delete, in the transaction of the change, so a consumer can
 * tell a stale event (an outbox replica published it late) from a newer one. Absent in events
 * written before it existed: those are applied as the newest, as they always were.
 */
const metaVersionSchema = z.number().int().nonnegative().optional();

export const documentDeletedSchema = z.object({
  documentId: z.uuid(),
  metaVersion: metaVersionSchema,
});
export type DocumentDeleted = z.infer<typeof documentDeletedSchema>;

/** The most document ids one `documents_removed` event names: its message stays near 40 KB. */
export const DOCUMENTS_REMOVED_BATCH = 1000;

/**
 * Many documents deleted at once, by emptying a knowledge base or deleting it with `cascade`
 * (docs/adr/0024): the indexes drop them with set-based deletes, one statement per index space
 * for the whole batch, instead of one `deleted` event per document. One transaction enqueues
 * every batch of the job. Each id was deleted exactly as by `deleted`; tombstones make the order
 * against the documents' other events irrelevant, and a redelivery removes nothing more.
 */
export const documentsRemovedSchema = z.object({
  documentIds: z.array(z.uuid()).min(1).max(DOCUMENTS_REMOVED_BATCH),
  /** The knowledge base emptied or deleted, and what happened to it. */
  knowledgeBaseId: z.string().min(1),
  cause: z.enum(['emptied', 'knowledge_base_deleted']),
  /** The job the batch belongs to (the REST answer's `jobId`), and its place in it. */
  jobId: z.uuid(),
  batch: z.number().int().nonnegative(),
  batches: z.number().int().positive(),
});
export type DocumentsRemoved = z.infer<typeof documentsRemovedSchema>;

/** Who may read a document changed: the indexes update its chunks in place, nothing is re-embedded. */
export const documentAclChangedSchema = z.object({
  documentId: z.uuid(),
  principals: z.array(z.string()),
  metaVersion: metaVersionSchema,
});

/** Tags, metadata or knowledge bases changed: the indexes update the chunks in place. */
export const documentAttributesChangedSchema = z.object({
  documentId: z.uuid(),
  attributes: documentAttributesSchema.pick({ knowledgeBaseIds: true, tags: true, metadata: true }),
  /** The index spaces of the document's pipelines now: it leaves any other it was in. */
  spaces: z.array(z.string().min(1)),
  metaVersion: metaVersionSchema,
});

/**
 * What document-service holds of some documents' readers, sent periodically by its access
 * reconciliation (keyed by tenant): indexing compares it with what it applied and repairs any
 * difference (docs/adr/0018).
 */
export const documentAccessSnapshotSchema = z.object({
  documents: z
    .array(
      z.object({
        documentId: z.uuid(),
        metaVersion: z.number().int().nonnegative(),
        principals: z.array(z.string()),
      }),
    )
    .max(1000),
});
export type DocumentAccessSnapshot = z.infer<typeof documentAccessSnapshotSchema>;

/** `kb.document.v1` carries the lifecycle of a document, discriminated by `kind`. */
export const documentEventSchema = z.discriminatedUnion('kind', [
  documentUploadedSchema.extend({ kind: z.literal('uploaded') }),
  documentDeletedSchema.extend({ kind: z.literal('deleted') }),
  documentsRemovedSchema.extend({ kind: z.literal('documents_removed') }),
  documentAclChangedSchema.extend({ kind: z.literal('acl_changed') }),
  documentAttributesChangedSchema.extend({ kind: z.literal('attributes_changed') }),
  documentAccessSnapshotSchema.extend({ kind: z.literal('access_snapshot') }),
]);
export type DocumentEvent = z.infer<typeof documentEventSchema>;

export const documentParsedSchema = z.object({
  documentId: z.uuid(),
  version: z.number().int().positive(),
  title: z.string(),
  chunkCount: z.number().int().nonnegative(),
  chunks: inlineOrRefSchema(parsedDocumentSchema),
  attributes: documentAttributesSchema.prefault({}),
  /** The pipeline these chunks belong to, and so the index space they go to. */
  pipeline: pipelineRefSchema,
});
export type DocumentParsed = z.infer<typeof documentParsedSchema>;

export const chunksEmbeddedSchema = z.object({
  documentId: z.uuid(),
  version: z.number().int().positive(),
  model: z.string().min(1),
  dimension: z.number().int().positive(),
  chunkCount: z.number().int().nonnegative(),
  embeddings: inlineOrRefSchema(embeddedChunksSchema),
  attributes: documentAttributesSchema.prefault({}),
  pipeline: pipelineRefSchema,
});
export type ChunksEmbedded = z.infer<typeof chunksEmbeddedSchema>;

export const DOCUMENT_STATUSES = [
  'pending',
  'parsing',
  'embedding',
  'indexing',
  'indexed',
  'failed',
] as const;
export const documentStatusSchema = z.enum(DOCUMENT_STATUSES);
export type DocumentStatus = z.infer<typeof documentStatusSchema>;

/** Machine-readable reasons a document ends `failed`. */
export const FAILURE_REASONS = [
  'unsupported_type',
  'type_mismatch',
  'encrypted',
  'no_text',
  'parse_error',
  /** Past a parser limit: inflated archive size or entries, extracted text, extraction memory. */
  'too_large',
  /** Extraction ran past the parser's time limit. */
  'timeout',
  /** Its knowledge base's PII setting is `block` and the text holds personal data (ADR 51). */
  'pii_blocked',
  'embedding_error',
  'indexing_error',
  /** No progress past a stage for the reconciliation timeout, after the allowed re-drives. */
  'stalled',
  'internal_error',
] as const;
export const failureReasonSchema = z.enum(FAILURE_REASONS);
export type FailureReason = z.infer<typeof failureReasonSchema>;

/** Why the parser did not report one of a mail's attachments (docs/adr/0048). */
export const ATTACHMENT_SKIP_REASONS = [
  /** Not a format the parser reads, or content that contradicts its declared type. */
  'unsupported_type',
  /** Over the parser's input limit. */
  'too_large',
  /** Past the most attachments one mail may bring (PARSER_MAX_ATTACHMENTS). */
  'too_many',
  /** Part of the body (an inline image), not an attachment of its own. */
  'inline',
  'empty',
  /** Over a quota of the mail's tenant or knowledge bases (document-service, docs/adr/0053). */
  'quota_exceeded',
] as const;
export const attachmentSkipReasonSchema = z.enum(ATTACHMENT_SKIP_REASONS);
export type AttachmentSkipReason = z.infer<typeof attachmentSkipReasonSchema>;

/** The most attachments, read or skipped, one report lists: its message stays near 100 KB. */
export const MAIL_ATTACHMENTS_REPORT_MAX = 1000;

/**
 * A mail's attachments the parser read (their bytes stored under the mail's derived prefix,
 * `blob`) and those it skipped, each by its place among the mail's attachments (`index`, from 0).
 */
export const mailAttachmentsSchema = z.object({
  extracted: z
    .array(
      z.object({
        index: z.number().int().nonnegative(),
        filename: z.string().min(1),
        contentType: z.string(),
        sizeBytes: z.number().int().positive(),
        sha256: z.string().regex(/^[a-f0-9]{64}$/),
        blob: blobRefSchema,
      }),
    )
    .max(MAIL_ATTACHMENTS_REPORT_MAX),
  skipped: z
    .array(
      z.object({
        index: z.number().int().nonnegative(),
        filename: z.string(),
        reason: attachmentSkipReasonSchema,
      }),
    )
    .max(MAIL_ATTACHMENTS_REPORT_MAX),
});
export type MailAttachments = z.infer<typeof mailAttachmentsSchema>;
/** The attachments of a mail its parse skipped, each with why (as document-service keeps them). */
export type SkippedAttachments = MailAttachments['skipped'];

export const documentStatusChangedSchema = z.object({
  documentId: z.uuid(),
  version: z.number().int().positive(),
  status: documentStatusSchema,
  reason: failureReasonSchema.optional(),
  detail: z.string().optional(),
  chunkCount: z.number().int().nonnegative().optional(),
  /**
   * What the parser found in this version, counted by type (docs/adr/0051), when its knowledge
   * bases look for PII. Recorded on the document whatever the status (the parser sends it on a
   * second `parsing` event).
   */
  pii: piiSummarySchema.optional(),
  /** A mail's attachments (docs/adr/0048), sent by the parser on a `parsing` event of their own. */
  attachments: mailAttachmentsSchema.optional(),
});
export type DocumentStatusChanged = z.infer<typeof documentStatusChangedSchema>;
