import type { FilterNode } from './filter';

/**
 * The tag an inactive document's chunks carry in the indexes (docs/adr/0025). document-service
 * adds it to the tags it sends the indexes while a document is inactive, and never shows it; it
 * starts with "_", which a user's tag cannot, so no upload or edit can set or clear it. Every
 * search path ANDs `activeOnly` into its filter, so the chunks stay indexed but are never found.
 */
export const INACTIVE_TAG = '_kb_inactive';

/** `filter` (if any) AND "not tagged inactive": what every search of the indexes applies. */
export function activeOnly(filter: FilterNode | undefined): FilterNode {
  const active: FilterNode = {
    kind: 'compare',
    field: { kind: 'tags' },
    operator: '$nin',
    value: [INACTIVE_TAG],
  };
  return filter ? { kind: 'and', children: [filter, active] } : active;
}

/** The tags a document's chunks carry in the indexes: its own, plus the marker while inactive. */
export function indexedTags(tags: string[], inactive: boolean): string[] {
  const own = tags.filter((tag) => tag !== INACTIVE_TAG);
  return inactive ? [...own, INACTIVE_TAG] : own;
}
