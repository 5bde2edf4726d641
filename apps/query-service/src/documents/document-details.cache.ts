import type { DocumentView } from '@kb/api-client';
import type { Caller } from '@kb/auth';
import { LRUCache } from 'lru-cache';

/** Documents whose details are kept, at most; each for at most `CALLERS_PER_DOCUMENT` tokens. */
const MAX_DOCUMENTS = 5_000;
const CALLERS_PER_DOCUMENT = 16;
/** Statuses a document keeps until document-service itself sends an event (a new version). */
const SETTLED = new Set<DocumentView['status']>(['indexed', 'failed']);

/** What `lookup` found, and when: hand `since` back to `store` with the rest, read after it. */
export interface DetailsLookup {
  found: Map<string, DocumentView>;
  missing: string[];
  since: { epoch: number; at: number };
}

/**
 * The documents document-service answered to a caller's token for a search's hit details,
 * served again to the same token for at most `ttlMs` (docs/adr/0045). An entry is exactly what
 * that token's listing answered, so the ACL is document-service's, as before. Every
 * `kb.document.v1` and `kb.document.status.v1` event drops its documents' entries, and
 * `kb.acl.v1` the tenant's (`forget`), so an edit, a delete, a new version, a status change or
 * a revocation reaches the next search within the event's delivery time, and `ttlMs` at worst.
 * A listing that started before an event of its tenant is not stored (it may predate the
 * change), nor a document still in the pipeline (its status events come from the pipeline, and
 * document-service may apply one after this cache heard of it). Nothing is served or stored
 * while `live()` says the events are not being received.
 */
export class DocumentDetailsCache {
  /** By tenant and document: each token's answer, and when it was read. */
  private readonly byDocument: LRUCache<string, Map<string, Entry>>;
  /** Moved on by every `forget` of the tenant. */
  private readonly epochs = new Map<string, number>();
  private live: () => boolean = () => false;

  constructor(
    private readonly ttlMs: number,
    maxDocuments = MAX_DOCUMENTS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.byDocument = new LRUCache({ max: maxDocuments });
  }

  /** Whether the events that invalidate entries are being received (the consumer is joined). */
  bindLiveness(live: () => boolean): void {
    this.live = live;
  }

  lookup(caller: Caller, ids: string[]): DetailsLookup {
    const since = { epoch: this.epochOf(caller.tenantId), at: this.now() };
    if (!this.serving()) return { found: new Map(), missing: ids, since };
    const found = new Map<string, DocumentView>();
    const missing: string[] = [];
    for (const id of ids) {
      const entry = this.byDocument.get(keyOf(caller.tenantId, id))?.get(caller.token);
      if (entry && this.now() - entry.readAt < this.ttlMs) found.set(id, entry.view);
      else missing.push(id);
    }
    return { found, missing, since };
  }

  /**
   * Keeps what the caller's listing, started at `since`, answered, unless an event of the tenant
   * came since; its age counts from `since`.
   */
  store(caller: Caller, views: Map<string, DocumentView>, since: DetailsLookup['since']): void {
    if (!this.serving() || this.epochOf(caller.tenantId) !== since.epoch) return;
    const readAt = since.at;
    for (const [id, view] of views) {
      // A status event reaches this cache and document-service at about the same time, so a
      // listing may show the status before it: only a settled document is kept.
      if (!SETTLED.has(view.status)) continue;
      const key = keyOf(caller.tenantId, id);
      const callers = this.byDocument.get(key) ?? new Map<string, Entry>();
      if (callers.size >= CALLERS_PER_DOCUMENT) callers.clear();
      this.byDocument.set(key, callers.set(caller.token, { view, readAt }));
    }
  }

  /** Drops the entries of `documentIds` in the tenant, or all of the tenant's when undefined. */
  forget(tenantId: string, documentIds?: readonly string[]): void {
    this.epochs.set(tenantId, this.epochOf(tenantId) + 1);
    if (documentIds) {
      for (const id of documentIds) this.byDocument.delete(keyOf(tenantId, id));
      return;
    }
    const prefix = keyOf(tenantId, '');
    for (const key of [...this.byDocument.keys()]) {
      if (key.startsWith(prefix)) this.byDocument.delete(key);
    }
  }

  private serving(): boolean {
    if (this.ttlMs <= 0) return false;
    if (this.live()) return true;
    // Events may be missed while the consumer is away: nothing kept from before is trusted.
    this.byDocument.clear();
    return false;
  }

  private epochOf(tenantId: string): number {
    return this.epochs.get(tenantId) ?? 0;
  }
}

interface Entry {
  view: DocumentView;
  readAt: number;
}

const keyOf = (tenantId: string, documentId: string): string => `${tenantId}\u0000${documentId}`;
