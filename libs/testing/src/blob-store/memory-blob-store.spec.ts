import { blobStoreConformance } from '../../../storage/test/support/conformance';
import { MemoryBlobStore } from './memory-blob-store';

describe('MemoryBlobStore', () => {
  describe('conformance', () =>
    blobStoreConformance((bucket) => new MemoryBlobStore({ bucket, created: false })));

  it('lists the keys it holds and the content type each was stored with', async () => {
    const store = new MemoryBlobStore();
    await store.put('b', 'x', 'text/plain');
    await store.put('a', Buffer.from('y'));
    expect(store.keys()).toEqual(['a', 'b']);
    expect(store.contentTypeOf('b')).toBe('text/plain');
    expect(store.contentTypeOf('a')).toBeUndefined();
  });
});
