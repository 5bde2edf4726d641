import { type FilterableFields, type FilterNode, matchesFilter } from '@kb/contracts';

import type { Memberships } from './snapshot-arrays';

/** Scopes kept per snapshot: every search carries the same few (docs/adr/0060). */
const SCOPES = 16;

/**
 * The chunks of a snapshot a search may return: in one of its knowledge bases and passing its
 * filter, as one mask, or null when every chunk may be returned. Pruning (MaxScore, windows)
 * finds the top k among these, so a filter no longer turns it off: every search in query-service
 * carries one (inactive documents are never found, docs/adr/0025). Masks are kept by scope; a
 * filter that does not name `document_id` is decided once per distinct set of tags, upload time
 * and metadata (a document's chunks share theirs), not per chunk.
 */
export class ScopeMasks {
  private readonly held = new Map<string, Uint8Array | null>();

  constructor(
    private readonly knowledgeBases: Memberships,
    private readonly documentIds: string[],
    private readonly attributes: Array<Omit<FilterableFields, 'documentId'>>,
    private readonly attributesOf: Int32Array,
  ) {}

  of(knowledgeBaseIds: string[] | undefined, filter: FilterNode | undefined): Uint8Array | null {
    const ids = knowledgeBaseIds?.length ? [...knowledgeBaseIds].sort() : [];
    if (ids.length === 0 && !filter) return null;
    const key = JSON.stringify([ids, filter ?? null]);
    const known = this.held.get(key);
    if (known !== undefined) {
      this.held.delete(key);
      this.held.set(key, known);
      return known;
    }
    let mask = ids.length > 0 ? this.knowledgeBases.mask(ids) : null;
    if (filter) mask = this.passing(filter, mask);
    this.held.set(key, mask);
    if (this.held.size > SCOPES) this.held.delete(this.held.keys().next().value as string);
    return mask;
  }

  /** `within` (or every chunk) narrowed to the chunks passing `filter`, as a new mask. */
  private passing(filter: FilterNode, within: Uint8Array | null): Uint8Array {
    const size = this.attributesOf.length;
    const mask = new Uint8Array(size);
    if (JSON.stringify(filter).includes('"document_id"')) {
      for (let o = 0; o < size; o++) {
        if (within && !within[o]) continue;
        const record = {
          documentId: this.documentIds[o]!,
          ...this.attributes[this.attributesOf[o]!]!,
        };
        mask[o] = matchesFilter(filter, record) ? 1 : 0;
      }
      return mask;
    }
    const perSet = this.attributes.map((attributes) =>
      matchesFilter(filter, { documentId: '', ...attributes }) ? 1 : 0,
    );
    for (let o = 0; o < size; o++) {
      if (!within || within[o]) mask[o] = perSet[this.attributesOf[o]!]!;
    }
    return mask;
  }
}
