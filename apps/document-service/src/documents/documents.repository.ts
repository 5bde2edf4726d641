import type { Access } from '@kb/auth';
import type { DocumentFilterNode, DocumentMetadata, TenantId } from '@kb/contracts';

import type { OutboxMessage } from '../outbox/outbox.repository';
import type { Trx } from '../platform/transaction.runner';
import type { DocumentAcl, DocumentRecord, NewDocument } from './document.model';
import type { AppliedStatus, StatusChange, TenantStatusChange } from './status-changes';

/** A new document's row; its membership and principals are already worked out. */
export interface NewDocumentRow extends NewDocument {
  /** The knowledge bases the uploader named; `knowledgeBaseIds` adds those of tag rules. */
  explicitKnowledgeBaseIds: string[];
  principals: string[];
}

/** A new version's content, already stored in S3. */
export interface NewContent {
  filename: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  blobKey: string;
  now: Date;
}

/** Which documents a caller may see: those granting one of `principals`, or all (`'all'`, admins). */
export type Visibility = string[] | 'all';

/** What a caller may see among the tenant's documents. */
export const visibilityOf = (access: Access): Visibility =>
  access.isAdmin ? 'all' : access.principals;

/** A deleted row: its content, and the meta version of the delete (one past the row's). */
export interface DeletedDocument {
  id: string;
  sha256: string;
  blobKey: string;
  metaVersion: number;
}

/** Tags, metadata and knowledge bases after an edit. */
export interface AttributesChange {
  inactive: boolean;
  tags: string[];
  metadata: DocumentMetadata;
  knowledgeBaseIds: string[];
  explicitKnowledgeBaseIds: string[];
}

/** A document whose knowledge bases differ from its explicit ones plus those its tags match. */
export interface MembershipDrift {
  id: string;
  inactive: boolean;
  tags: string[];
  metadata: DocumentMetadata;
  knowledgeBaseIds: string[];
  explicit: string[];
  /** The knowledge bases whose tag rule matches its tags, by id. */
  byRule: string[];
}

/**
 * The `documents` table (`SqlDocumentsRepository` in Postgres; an in-memory one in unit tests).
 * Every method takes the tenant, but one: whether content is still
 * referenced, because blobs are content-addressed and shared by every tenant. Methods taking a
 * `trx` write (or lock) in the caller's transaction; the others read on their own.
 */
/**
 * The audit record of a listing, written by the statement that reads the page: one round trip to
 * Postgres for a read and its record instead of two (a search's hit details are a listing,
 * docs/adr/0029). `message.payload` is the envelope with an empty `payload.documentIds`, which the
 * statement fills with the ids of the first `served` rows, in page order (a listing reads one row
 * more than it serves, to know whether a next page exists); the key is the document's id when
 * exactly one is served, else `message.key` (the actor), as `DocumentAudit.record` keys it.
 */
export interface ListingRead {
  message: OutboxMessage;
  served: number;
}

export abstract class DocumentsRepository {
  /** Serializes, until `trx` ends, everyone inserting this content in the tenant. */
  abstract lockContent(trx: Trx, tenantId: TenantId, sha256: string): Promise<void>;
  /** The tenant's oldest document with this content that `visibility` may read. */
  abstract findBySha256(
    tenantId: TenantId,
    sha256: string,
    visibility: Visibility,
    trx?: Trx,
  ): Promise<DocumentRecord | undefined>;
  /** The tenant's document with this external id, whoever may read it (ids are unique per tenant). */
  abstract findByExternalId(
    tenantId: TenantId,
    externalId: string,
    trx?: Trx,
  ): Promise<DocumentRecord | undefined>;
  /**
   * The tenant's documents whose external id starts with `prefix` (a source's, ADR 26), all of
   * them: the server's sync plans with it. Callers' listings page with `pageByExternalIdPrefix`.
   * In `trx` when given (a write that acts on what it lists).
   */
  abstract listByExternalIdPrefix(
    tenantId: TenantId,
    prefix: string,
    visibility: Visibility,
    trx?: Trx,
  ): Promise<DocumentRecord[]>;
  /**
   * Up to `limit` of those documents in external-id order (byte order, as `COLLATE "C"`), after
   * the external id `after` when given: `GET /v1/documents?externalIdPrefix=` (review N6).
   */
  abstract pageByExternalIdPrefix(
    tenantId: TenantId,
    prefix: string,
    visibility: Visibility,
    limit: number,
    after?: string,
  ): Promise<DocumentRecord[]>;
  abstract findById(
    tenantId: TenantId,
    id: string,
    visibility: Visibility,
  ): Promise<DocumentRecord | undefined>;
  /**
   * A page, newest first, after the cursor `after`, optionally in one knowledge base and matching
   * a filter (the language of docs/adr/0007 over a document's fields). With `read`, the
   * listing's audit record is written to the outbox by the same statement (`ListingRead`).
   */
  abstract list(
    tenantId: TenantId,
    limit: number,
    visibility: Visibility,
    after?: { createdAt: string; id: string },
    knowledgeBaseId?: string,
    filter?: DocumentFilterNode,
    read?: ListingRead,
  ): Promise<DocumentRecord[]>;
  /**
   * Deletes, in one statement, the documents `visibility` may read whose only knowledge base is
   * `knowledgeBaseId`, but those in `keep` (held, docs/adr/0052); what each delete left to clean
   * up (as `delete` answers).
   */
  abstract deleteOnlyIn(
    trx: Trx,
    tenantId: TenantId,
    knowledgeBaseId: string,
    visibility: Visibility,
    keep?: string[],
  ): Promise<DeletedDocument[]>;
  /** The documents in `knowledgeBaseId` that `visibility` may read, locked until `trx` ends. */
  abstract lockMembers(
    trx: Trx,
    tenantId: TenantId,
    knowledgeBaseId: string,
    visibility: Visibility,
  ): Promise<DocumentRecord[]>;
  /** The document, locked until `trx` ends; undefined when it is gone. */
  abstract lockForUpdate(
    trx: Trx,
    tenantId: TenantId,
    id: string,
  ): Promise<DocumentRecord | undefined>;
  /** A new document, version 1, `pending`. */
  abstract insert(trx: Trx, row: NewDocumentRow): Promise<DocumentRecord>;
  /** The next version, `pending`, of a document the caller locked. */
  abstract replaceContent(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    content: NewContent,
  ): Promise<DocumentRecord>;
  /** `setAcl`, `setAttributes` and `setMembership` move the meta version on by one (ADR 18). */
  abstract setAcl(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    acl: DocumentAcl,
    principals: string[],
    now: Date,
  ): Promise<DocumentRecord>;
  abstract setAttributes(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    change: AttributesChange,
    now: Date,
  ): Promise<DocumentRecord>;
  abstract setMembership(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    knowledgeBaseIds: string[],
    now: Date,
  ): Promise<DocumentRecord>;
  /**
   * Deletes the row; its content and the meta version of the delete (one past the row's), or
   * undefined when it was gone.
   */
  abstract delete(
    trx: Trx,
    tenantId: TenantId,
    id: string,
  ): Promise<Omit<DeletedDocument, 'id'> | undefined>;
  /** Sets the document's own retention date (null: none); undefined when it is gone. */
  abstract setExpiry(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    expiresAt: Date | null,
  ): Promise<DocumentRecord | undefined>;
  /** The tenant's documents whose membership no longer matches their tags and the tag rules. */
  abstract driftedMemberships(trx: Trx, tenantId: TenantId): Promise<MembershipDrift[]>;
  /**
   * Moves documents forward in the pipeline, a batch of status events at once (one statement).
   * A change applies only to the document's current version and only when its status ranks
   * above the current one (`STATUS_RANK`), so replayed or late events change nothing; a final
   * status (`indexed`, `failed`) is never left. Several changes to one version apply as they
   * would one by one (`collapseStatusChanges`). Returns the versions that moved.
   */
  abstract applyStatuses(changes: TenantStatusChange[]): Promise<AppliedStatus[]>;

  /** One status change (`applyStatuses`); whether the row changed. */
  async applyStatus(tenantId: TenantId, change: StatusChange): Promise<boolean> {
    return (await this.applyStatuses([{ ...change, tenantId }])).length > 0;
  }
  /**
   * Whether any document still points at this original. A tenant's key (`blobs/<tenant>/…`) is
   * only ever in that tenant's rows, so the answer says nothing about other tenants; only
   * originals stored before per-tenant keys are shared.
   */
  abstract isBlobReferenced(sha256: string, blobKey: string): Promise<boolean>;
}
