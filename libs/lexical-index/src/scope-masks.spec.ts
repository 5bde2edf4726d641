import { type FilterableFields, parseFilter } from '@kb/contracts';

import { ScopeMasks } from './scope-masks';
import { Memberships } from './snapshot-arrays';

describe('ScopeMasks', () => {
  // Four chunks: two documents of two chunks, the second document tagged and in both bases.
  const documentIds = ['doc-a', 'doc-a', 'doc-b', 'doc-b'];
  const attributes: Array<Omit<FilterableFields, 'documentId'>> = [
    { tags: [], uploadedAt: 1, metadata: {} },
    { tags: ['kept'], uploadedAt: 2, metadata: { team: 'ops' } },
  ];
  const attributesOf = Int32Array.from([0, 0, 1, 1]);
  const bases = new Memberships([['kb-1'], ['kb-1'], ['kb-1', 'kb-2'], ['kb-2']]);
  const masks = () => new ScopeMasks(bases, documentIds, attributes, attributesOf);

  it('is null when nothing narrows the scope, and the knowledge bases’ mask without a filter', () => {
    const scopes = masks();
    expect(scopes.of(undefined, undefined)).toBeNull();
    expect(scopes.of([], undefined)).toBeNull();
    expect([...scopes.of(['kb-2'], undefined)!]).toEqual([0, 0, 1, 1]);
  });

  it('narrows by a filter decided per attribute set, and by one naming document_id per chunk', () => {
    const scopes = masks();
    expect([...scopes.of(undefined, parseFilter({ tags: 'kept' }))!]).toEqual([0, 0, 1, 1]);
    expect([...scopes.of(['kb-1'], parseFilter({ 'metadata.team': 'ops' }))!]).toEqual([
      0, 0, 1, 0,
    ]);
    const byDocument = parseFilter({ document_id: { $ne: 'doc-b' } });
    expect([...scopes.of(['kb-1', 'kb-2'], byDocument)!]).toEqual([1, 1, 0, 0]);
  });

  it('keeps a scope’s mask for the next search, whatever the order of its knowledge bases', () => {
    const scopes = masks();
    const filter = parseFilter({ tags: { $nin: ['kept'] } });
    const first = scopes.of(['kb-2', 'kb-1'], filter);
    expect(scopes.of(['kb-1', 'kb-2'], filter)).toBe(first);
    expect([...first!]).toEqual([1, 1, 0, 0]);
  });
});
