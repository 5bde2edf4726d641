import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';

import { S3BlobStore, s3BlobStoreFromEnv } from '../src';
import { blobStoreConformance } from './support/conformance';

jest.setTimeout(60_000);

/** Runs against the S3-compatible server from `npm run infra:up`. */
describe('S3BlobStore', () => {
  const stores: S3BlobStore[] = [];
  const storeFor = (bucket: string): S3BlobStore => {
    const store = s3BlobStoreFromEnv({
      S3_ENDPOINT: process.env['S3_ENDPOINT'],
      S3_REGION: process.env['S3_REGION'] ?? 'us-east-1',
      S3_BUCKET: bucket,
      S3_ACCESS_KEY_ID: process.env['S3_ACCESS_KEY_ID'],
      S3_SECRET_ACCESS_KEY: process.env['S3_SECRET_ACCESS_KEY'],
    });
    stores.push(store);
    return store;
  };
  afterAll(() => stores.forEach((store) => store.destroy()));

  describe('conformance', () => blobStoreConformance(storeFor));

  it('streams a body larger than one part as a multipart upload', async () => {
    const store = storeFor(`kb-test-${randomUUID().slice(0, 8)}`);
    await store.ensureBucket();
    const body = randomBytes(12 * 1024 * 1024);
    await store.put(
      'big.bin',
      Readable.from([body.subarray(0, 5_000_000), body.subarray(5_000_000)]),
    );
    expect((await store.get('big.bin')).equals(body)).toBe(true);
  });

  it('lists keys with their last write time, in key order', async () => {
    const store = storeFor(`kb-test-${randomUUID().slice(0, 8)}`);
    await store.ensureBucket();
    const before = Date.now();
    await store.put('a/2.txt', Buffer.from('two'));
    await store.put('a/1.txt', Buffer.from('one'));
    await store.put('b/3.txt', Buffer.from('three'));
    const entries = await store.listEntries('a/');
    expect(entries.map((e) => e.key)).toEqual(['a/1.txt', 'a/2.txt']);
    for (const { lastModified } of entries) {
      // S3 keeps whole seconds.
      expect(lastModified!.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      expect(lastModified!.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    }
  });

  it('lists one level: the objects directly under a prefix and the folders below it', async () => {
    const store = storeFor(`kb-test-${randomUUID().slice(0, 8)}`);
    await store.ensureBucket();
    for (const key of ['top.txt', 'a/x/1.txt', 'a/y/2.txt', 'a/loose.txt', 'b/3.txt']) {
      await store.put(key, Buffer.from(key));
    }
    const root = await store.listLevel('');
    expect(root.folders).toEqual(['a/', 'b/']);
    expect(root.entries.map((e) => e.key)).toEqual(['top.txt']);
    const a = await store.listLevel('a/');
    expect(a.folders).toEqual(['a/x/', 'a/y/']);
    expect(a.entries.map((e) => e.key)).toEqual(['a/loose.txt']);
  });
});
