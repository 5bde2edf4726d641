import type { TenantId } from '@kb/contracts';

import type { DocumentRecord } from '../documents/document.model';
import type { KnowledgeBaseView } from '../knowledge-bases/knowledge-base.model';
import type { StoredOutboxMessage } from '../outbox/outbox.repository';

/** A knowledge base as the in-memory store keeps it. */
export interface StoredKnowledgeBase {
  tenantId: TenantId;
  view: KnowledgeBaseView;
  /** As stored, before validation (a row may hold `{}`). */
  chunker: unknown;
  /** As stored: NULL (undefined) for the defaults. */
  parsing?: unknown;
}

/** One write, and the transaction it was made in: what specs check "in one transaction" with. */
export interface Write {
  trx: number;
  table: 'documents' | 'knowledge_bases' | 'outbox';
  op: string;
  key: string;
}

/**
 * The tables of document-service, in memory, shared by the in-memory repositories. The
 * transaction runner snapshots it before each unit of work and restores it when the work throws.
 */
export class InMemoryDatabase {
  documents = new Map<string, DocumentRecord>();
  knowledgeBases = new Map<string, StoredKnowledgeBase>();
  outbox: Array<StoredOutboxMessage & { trx: number }> = [];
  writes: Write[] = [];
  private nextOutboxId = 1;

  /** Takes a copy of every table; the function returned puts it back. */
  snapshot(): () => void {
    const copy = clone({
      documents: this.documents,
      knowledgeBases: this.knowledgeBases,
      outbox: this.outbox,
      writes: this.writes,
    });
    return () => {
      this.documents = copy.documents;
      this.knowledgeBases = copy.knowledgeBases;
      this.outbox = copy.outbox;
      this.writes = copy.writes;
    };
  }

  outboxId(): string {
    return String(this.nextOutboxId++);
  }
}

/**
 * A deep copy of plain data (objects, arrays, Maps, Dates), made in this realm: Node's
 * `structuredClone` builds objects of another realm under Jest, which `isDeepStrictEqual` tells
 * apart from the service's own.
 */
export function clone<T>(value: T): T {
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [k, clone(v)])) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => clone(item)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clone(v)])) as T;
  }
  return value;
}

/** The key of a tenant's row. */
export const keyOf = (tenantId: string, id: string): string => `${tenantId}/${id}`;
