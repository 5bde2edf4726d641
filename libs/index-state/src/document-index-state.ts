import {
  type EditableAttributes,
  type IndexSpace,
  type TenantId,
  tenantSpace,
} from '@kb/contracts';

/**
 * What an index space should hold of a document: the version claimed last in it (absent when none
 * was), and whether the document was deleted.
 */
export interface SpaceState {
  version?: number;
  deleted: boolean;
}

/** The ACL recorded for a document, at which meta version, and whether both indexes took it. */
export interface RecordedAccess {
  principals: string[];
  version: number;
  /** True once every index space of the document was given this version's principals. */
  applied: boolean;
}

/** Where a knowledge base's chunks are searched, and the model that embeds its queries. */
export interface KnowledgeBaseSpace {
  space: IndexSpace;
  /** Undefined for the tenant's own space: the deployment's default model. */
  model: string | undefined;
}

/**
 * indexing-service's bookkeeping per document, which lets index writes race safely: tombstones
 * (a late event cannot bring a deleted document back), version claims (an older version cannot
 * replace a newer one), the index spaces holding it (deletes and edits reach every pipeline's
 * copy), and the ACL and attributes edited while a version was still in the pipeline.
 */
export interface DocumentIndexState {
  /** Records that a document was deleted; indexing it afterwards is refused. */
  tombstone(tenantId: TenantId, documentId: string): Promise<void>;
  isTombstoned(tenantId: TenantId, documentId: string): Promise<boolean>;
  /**
   * Forgets all a deleted document left here but its tombstone (docs/adr/0019): its latest ACL and
   * attributes (tags and metadata are the user's words), its version claims in `spaces` and the
   * spaces holding it. Idempotent.
   */
  forgetDocument(tenantId: TenantId, documentId: string, spaces: IndexSpace[]): Promise<void>;
  /** `tombstone` for many documents in one statement (emptying a knowledge base, ADR 24). */
  tombstoneMany(tenantId: TenantId, documentIds: string[]): Promise<void>;
  /**
   * `spacesOf` for many documents at once: each space holding any of them, with the ids it holds.
   * The tenant's own space always counts, for every id.
   */
  spacesOfMany(tenantId: TenantId, documentIds: string[]): Promise<Map<IndexSpace, string[]>>;
  /** `forgetDocument` for many documents, set-based; `spaces` are every space they were in. */
  forgetDocuments(tenantId: TenantId, documentIds: string[], spaces: IndexSpace[]): Promise<void>;
  /** Queues the S3 cleanup of these documents' derived objects (bulk removal). Idempotent. */
  queueDerivedCleanup(tenantId: TenantId, documentIds: string[]): Promise<void>;
  /**
   * Up to `limit` queued documents, each leased to the caller for `leaseMs` (another replica
   * skips them; they come back if the caller dies before `derivedCleanupDone`).
   */
  claimDerivedCleanup(
    limit: number,
    leaseMs: number,
  ): Promise<Array<{ tenantId: TenantId; documentId: string }>>;
  /** These documents' derived objects are gone: they leave the queue. */
  derivedCleanupDone(tenantId: TenantId, documentIds: string[]): Promise<void>;

  /**
   * Claims an index space for `version` of a document: true when it is the newest seen so far (or
   * the same one again, a replay), false when a newer version was already claimed.
   */
  claimVersion(space: IndexSpace, documentId: string, version: number): Promise<boolean>;
  /**
   * What an index space should hold of these documents (orphan sweep). A document absent from
   * the map was never claimed in the space nor deleted.
   */
  indexStates(space: IndexSpace, documentIds: string[]): Promise<Map<string, SpaceState>>;

  /**
   * Records that `space` holds `version` of a document with `chunkCount` chunks (an older version
   * never replaces a newer one's entry), and returns the spaces holding that version or a newer
   * one now, each with its chunk count.
   */
  recordSpace(
    tenantId: TenantId,
    documentId: string,
    space: IndexSpace,
    version: number,
    chunkCount: number,
  ): Promise<Map<IndexSpace, number>>;
  /**
   * Notes that `space` is about to receive the document's chunks (its first version there), before
   * they are written: an ACL or attribute change arriving meanwhile then reaches that space too.
   * Counts as holding no version; an existing entry is left as it is.
   */
  reserveSpace(tenantId: TenantId, documentId: string, space: IndexSpace): Promise<void>;
  /** Every space holding the document; the tenant's own space always counts. */
  spacesOf(tenantId: TenantId, documentId: string): Promise<IndexSpace[]>;
  forgetSpace(tenantId: TenantId, documentId: string, space: IndexSpace): Promise<void>;
  /** Every space that holds some document, each once (the orphan sweep's). */
  allSpaces(): Promise<IndexSpace[]>;

  /** Records that these knowledge bases' chunks are in `space`, embedded by `model`. */
  recordKnowledgeBaseSpace(
    tenantId: TenantId,
    knowledgeBaseIds: string[],
    space: IndexSpace,
    model: string,
  ): Promise<void>;
  /**
   * The index spaces (and their models) to search for these knowledge bases, or for all of the
   * tenant's when none is named. A knowledge base with nothing indexed yet is looked for in the
   * tenant's own space, where it holds nothing either.
   */
  knowledgeBaseSpaces(
    tenantId: TenantId,
    knowledgeBaseIds: string[],
  ): Promise<KnowledgeBaseSpace[]>;

  /**
   * Records a document's latest ACL at meta `version` (docs/adr/0018), for versions indexed after
   * the change, unless a newer version is recorded: false then (a stale event). The same version
   * again records again (a replay). An undefined version (an event from before versions) is
   * recorded as the newest without moving the version. Not applied until `markPrincipalsApplied`.
   */
  recordPrincipals(
    tenantId: TenantId,
    documentId: string,
    principals: string[],
    version?: number,
  ): Promise<boolean>;
  /**
   * Marks the recorded ACL applied to both indexes, if it is still at `version` (undefined: at
   * whatever version it is).
   */
  markPrincipalsApplied(tenantId: TenantId, documentId: string, version?: number): Promise<void>;
  /** The ACLs recorded for these documents (access reconciliation); absent: never changed. */
  accessStates(tenantId: TenantId, documentIds: string[]): Promise<Map<string, RecordedAccess>>;
  /** The document's ACL as last changed, or undefined when it never changed since upload. */
  principalsOf(tenantId: TenantId, documentId: string): Promise<string[] | undefined>;
  /**
   * Records a document's latest editable attributes at meta `version`, for versions indexed after
   * the edit, with `recordPrincipals`' rules: false when a newer version is recorded.
   */
  recordAttributes(
    tenantId: TenantId,
    documentId: string,
    attributes: EditableAttributes,
    version?: number,
  ): Promise<boolean>;
  /** The attributes as last edited, or undefined when the document was not edited since upload. */
  attributesOf(tenantId: TenantId, documentId: string): Promise<EditableAttributes | undefined>;
}

/**
 * The spaces to search for these knowledge bases (all of the tenant's when none is named), from
 * the recorded spaces of those found: the tenant's own space, with the default model, whenever a
 * knowledge base named has no record yet; each space once. Every adapter answers through this.
 */
export function spacesToSearch(
  tenantId: TenantId,
  knowledgeBaseIds: string[],
  recorded: Array<{ knowledgeBaseId: string; space: IndexSpace; model: string }>,
): KnowledgeBaseSpace[] {
  const own = tenantSpace(tenantId);
  const spaces = new Map<IndexSpace, string | undefined>();
  const found = new Set(recorded.map((entry) => entry.knowledgeBaseId));
  if (knowledgeBaseIds.length === 0 || knowledgeBaseIds.some((id) => !found.has(id))) {
    spaces.set(own, undefined);
  }
  for (const entry of recorded) {
    spaces.set(entry.space, entry.space === own ? undefined : entry.model);
  }
  return [...spaces].map(([space, model]) => ({ space, model }));
}
