import {
  type EditableAttributes,
  type IndexSpace,
  type TenantId,
  tenantOfSpace,
  tenantSpace,
} from '@kb/contracts';
import {
  type DocumentIndexState,
  type KnowledgeBaseSpace,
  type RecordedAccess,
  type SpaceState,
  spacesToSearch,
} from '@kb/index-state';

/** Maps keyed by (tenant or space, document), as the Postgres tables are. */
const key = (owner: string, documentId: string): string => `${owner}\u0000${documentId}`;

/** In-memory `DocumentIndexState`, with the Postgres adapter's semantics. */
export class MemoryDocumentIndexState implements DocumentIndexState {
  private readonly tombstones = new Set<string>();
  private readonly versions = new Map<string, number>();
  /** By (tenant, document): the spaces holding it, with version and chunk count. */
  private readonly spaces = new Map<string, Map<IndexSpace, { version: number; chunks: number }>>();
  private readonly kbSpaces = new Map<
    TenantId,
    Map<string, { knowledgeBaseId: string; space: IndexSpace; model: string }>
  >();
  private readonly principals = new Map<
    string,
    { principals: string[]; version: number; appliedVersion: number }
  >();
  private readonly attributes = new Map<
    string,
    { attributes: EditableAttributes; version: number }
  >();

  async tombstone(tenantId: TenantId, documentId: string): Promise<void> {
    this.tombstones.add(key(tenantId, documentId));
  }

  async isTombstoned(tenantId: TenantId, documentId: string): Promise<boolean> {
    return this.tombstones.has(key(tenantId, documentId));
  }

  async forgetDocument(
    tenantId: TenantId,
    documentId: string,
    spaces: IndexSpace[],
  ): Promise<void> {
    this.principals.delete(key(tenantId, documentId));
    this.attributes.delete(key(tenantId, documentId));
    for (const space of spaces) this.versions.delete(key(space, documentId));
    this.spaces.delete(key(tenantId, documentId));
  }

  async tombstoneMany(tenantId: TenantId, documentIds: string[]): Promise<void> {
    for (const documentId of documentIds) await this.tombstone(tenantId, documentId);
  }

  async spacesOfMany(
    tenantId: TenantId,
    documentIds: string[],
  ): Promise<Map<IndexSpace, string[]>> {
    const bySpace = new Map<IndexSpace, string[]>();
    for (const documentId of new Set(documentIds)) {
      for (const space of await this.spacesOf(tenantId, documentId)) {
        bySpace.set(space, [...(bySpace.get(space) ?? []), documentId]);
      }
    }
    return bySpace;
  }

  async forgetDocuments(
    tenantId: TenantId,
    documentIds: string[],
    spaces: IndexSpace[],
  ): Promise<void> {
    for (const documentId of documentIds) await this.forgetDocument(tenantId, documentId, spaces);
  }

  /** Queued derived cleanups by `tenant/document`, with the time their lease ends (0: none). */
  private readonly derivedQueue = new Map<
    string,
    { tenantId: TenantId; documentId: string; claimedUntil: number }
  >();

  async queueDerivedCleanup(tenantId: TenantId, documentIds: string[]): Promise<void> {
    for (const documentId of documentIds) {
      const id = key(tenantId, documentId);
      if (!this.derivedQueue.has(id)) {
        this.derivedQueue.set(id, { tenantId, documentId, claimedUntil: 0 });
      }
    }
  }

  async claimDerivedCleanup(
    limit: number,
    leaseMs: number,
  ): Promise<Array<{ tenantId: TenantId; documentId: string }>> {
    const now = Date.now();
    const claimed = [...this.derivedQueue.values()]
      .filter((entry) => entry.claimedUntil < now)
      .slice(0, limit);
    for (const entry of claimed) entry.claimedUntil = now + leaseMs;
    return claimed.map(({ tenantId, documentId }) => ({ tenantId, documentId }));
  }

  async derivedCleanupDone(tenantId: TenantId, documentIds: string[]): Promise<void> {
    for (const documentId of documentIds) this.derivedQueue.delete(key(tenantId, documentId));
  }

  async claimVersion(space: IndexSpace, documentId: string, version: number): Promise<boolean> {
    const claimed = this.versions.get(key(space, documentId));
    if (claimed !== undefined && claimed > version) return false;
    this.versions.set(key(space, documentId), version);
    return true;
  }

  async indexStates(space: IndexSpace, documentIds: string[]): Promise<Map<string, SpaceState>> {
    const states = new Map<string, SpaceState>();
    for (const documentId of documentIds) {
      const version = this.versions.get(key(space, documentId));
      const deleted = this.tombstones.has(key(tenantOfSpace(space), documentId));
      if (version !== undefined || deleted) {
        states.set(documentId, { ...(version === undefined ? {} : { version }), deleted });
      }
    }
    return states;
  }

  async recordSpace(
    tenantId: TenantId,
    documentId: string,
    space: IndexSpace,
    version: number,
    chunkCount: number,
  ): Promise<Map<IndexSpace, number>> {
    const held = this.spaces.get(key(tenantId, documentId)) ?? new Map();
    this.spaces.set(key(tenantId, documentId), held);
    const existing = held.get(space);
    // An older version never replaces a newer one's entry.
    if (!existing || existing.version <= version) held.set(space, { version, chunks: chunkCount });
    return new Map(
      [...held].filter(([, entry]) => entry.version >= version).map(([s, e]) => [s, e.chunks]),
    );
  }

  async reserveSpace(tenantId: TenantId, documentId: string, space: IndexSpace): Promise<void> {
    const held = this.spaces.get(key(tenantId, documentId)) ?? new Map();
    this.spaces.set(key(tenantId, documentId), held);
    if (!held.has(space)) held.set(space, { version: 0, chunks: 0 });
  }

  async spacesOf(tenantId: TenantId, documentId: string): Promise<IndexSpace[]> {
    const held = this.spaces.get(key(tenantId, documentId))?.keys() ?? [];
    return [...new Set([tenantSpace(tenantId), ...held])];
  }

  async forgetSpace(tenantId: TenantId, documentId: string, space: IndexSpace): Promise<void> {
    this.spaces.get(key(tenantId, documentId))?.delete(space);
  }

  async allSpaces(): Promise<IndexSpace[]> {
    const all = [...this.spaces.values()].flatMap((held) => [...held.keys()]);
    return [...new Set(all)].sort();
  }

  async recordKnowledgeBaseSpace(
    tenantId: TenantId,
    knowledgeBaseIds: string[],
    space: IndexSpace,
    model: string,
  ): Promise<void> {
    const recorded = this.kbSpaces.get(tenantId) ?? new Map();
    this.kbSpaces.set(tenantId, recorded);
    for (const knowledgeBaseId of knowledgeBaseIds) {
      recorded.set(knowledgeBaseId, { knowledgeBaseId, space, model });
    }
  }

  async knowledgeBaseSpaces(
    tenantId: TenantId,
    knowledgeBaseIds: string[],
  ): Promise<KnowledgeBaseSpace[]> {
    const recorded = [...(this.kbSpaces.get(tenantId)?.values() ?? [])].filter(
      (entry) => knowledgeBaseIds.length === 0 || knowledgeBaseIds.includes(entry.knowledgeBaseId),
    );
    return spacesToSearch(tenantId, knowledgeBaseIds, recorded);
  }

  async recordPrincipals(
    tenantId: TenantId,
    documentId: string,
    principals: string[],
    version?: number,
  ): Promise<boolean> {
    const recorded = this.principals.get(key(tenantId, documentId));
    if (!recorded) {
      this.principals.set(key(tenantId, documentId), {
        principals: [...principals],
        version: version ?? 0,
        appliedVersion: -1,
      });
      return true;
    }
    if (version !== undefined && recorded.version > version) return false;
    recorded.principals = [...principals];
    recorded.version = Math.max(recorded.version, version ?? 0);
    return true;
  }

  async markPrincipalsApplied(
    tenantId: TenantId,
    documentId: string,
    version?: number,
  ): Promise<void> {
    const recorded = this.principals.get(key(tenantId, documentId));
    if (recorded && (version === undefined || recorded.version === version)) {
      recorded.appliedVersion = recorded.version;
    }
  }

  async accessStates(
    tenantId: TenantId,
    documentIds: string[],
  ): Promise<Map<string, RecordedAccess>> {
    const states = new Map<string, RecordedAccess>();
    for (const documentId of documentIds) {
      const recorded = this.principals.get(key(tenantId, documentId));
      if (!recorded) continue;
      states.set(documentId, {
        principals: [...recorded.principals],
        version: recorded.version,
        applied: recorded.appliedVersion === recorded.version,
      });
    }
    return states;
  }

  async principalsOf(tenantId: TenantId, documentId: string): Promise<string[] | undefined> {
    const recorded = this.principals.get(key(tenantId, documentId));
    return recorded && [...recorded.principals];
  }

  async recordAttributes(
    tenantId: TenantId,
    documentId: string,
    attributes: EditableAttributes,
    version?: number,
  ): Promise<boolean> {
    const recorded = this.attributes.get(key(tenantId, documentId));
    if (recorded && version !== undefined && recorded.version > version) return false;
    this.attributes.set(key(tenantId, documentId), {
      attributes: structuredClone(attributes),
      version: Math.max(recorded?.version ?? 0, version ?? 0),
    });
    return true;
  }

  async attributesOf(
    tenantId: TenantId,
    documentId: string,
  ): Promise<EditableAttributes | undefined> {
    const recorded = this.attributes.get(key(tenantId, documentId));
    return recorded && structuredClone(recorded.attributes);
  }
}
