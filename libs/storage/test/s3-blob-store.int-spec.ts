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
});
