import { derivedPrefix, keyOfTenant, originalPrefixes, spaceOfTenant } from './tenant-scope';

describe('tenant scope of an event', () => {
  it('accepts the tenant’s own spaces and refuses another tenant’s or a malformed one', () => {
    expect(spaceOfTenant('acme', 'acme', 'indexing_error')).toBe('acme');
    expect(spaceOfTenant('acme', 'acme~0a1b2c3d4e5f', 'indexing_error')).toBe('acme~0a1b2c3d4e5f');
    for (const space of ['globex', 'globex~0a1b2c3d4e5f', 'acme~', 'ACME']) {
      expect(() => spaceOfTenant('acme', space, 'indexing_error')).toThrow(
        expect.objectContaining({ name: 'PermanentError', reason: 'indexing_error' }),
      );
    }
  });

  it('accepts claim checks under the tenant’s prefixes only', () => {
    const derived = [derivedPrefix('acme')];
    expect(keyOfTenant('derived/acme/d1/v1/chunks.x.json', derived, 'parse_error')).toBe(
      'derived/acme/d1/v1/chunks.x.json',
    );
    expect(keyOfTenant('blobs/sha256/abc', originalPrefixes('acme'), 'parse_error')).toBe(
      'blobs/sha256/abc',
    );
    for (const key of [
      'derived/globex/d1/v1/chunks.x.json',
      'derived/acme-corp/d1/v1/chunks.x.json',
      'derived/acme/../globex/d1/v1/chunks.x.json',
      'blobs/globex/sha256/abc',
    ]) {
      expect(() =>
        keyOfTenant(key, [...derived, ...originalPrefixes('acme')], 'parse_error'),
      ).toThrow(expect.objectContaining({ reason: 'parse_error' }));
    }
  });
});
