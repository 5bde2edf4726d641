import { matchesFilter } from './filter-match';
import { activeOnly, INACTIVE_TAG, indexedTags } from './inactive';

const chunk = (tags: string[]) => ({ documentId: 'd', tags, uploadedAt: 0, metadata: {} });

describe('inactive documents', () => {
  it('keeps a chunk tagged inactive out of every filter, with or without one of its own', () => {
    expect(matchesFilter(activeOnly(undefined), chunk(['a']))).toBe(true);
    expect(matchesFilter(activeOnly(undefined), chunk(['a', INACTIVE_TAG]))).toBe(false);
    const own = {
      kind: 'compare' as const,
      field: { kind: 'tags' as const },
      operator: '$eq' as const,
      value: 'a',
    };
    expect(matchesFilter(activeOnly(own), chunk(['a']))).toBe(true);
    expect(matchesFilter(activeOnly(own), chunk(['a', INACTIVE_TAG]))).toBe(false);
  });

  it('adds the marker while inactive and removes it when active again', () => {
    expect(indexedTags(['x'], true)).toEqual(['x', INACTIVE_TAG]);
    expect(indexedTags(['x', INACTIVE_TAG], false)).toEqual(['x']);
    expect(indexedTags([INACTIVE_TAG], true)).toEqual([INACTIVE_TAG]);
  });
});
