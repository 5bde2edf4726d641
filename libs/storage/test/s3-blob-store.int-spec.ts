import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { getJson, putJson, s3BlobStoreFromEnv } from '../src';

jest.setTimeout(60_000);

/** Runs against the S3-compatible server from `npm run infra:up`. */
describe('S3BlobStore', () => {
  const store = s3BlobStoreFromEnv({
    S3_ENDPOINT: process.env['S3_ENDPOINT'],
    S3_REGION: process.env['S3_REGION'] ?? 'us-east-1',
    S3_BUCKET: `kb-test-${randomUUID().slice(0, 8)}`,
    S3_ACCESS_KEY_ID: process.env['S3_ACCESS_KEY_ID'],
    S3_SECRET_ACCESS_KEY: process.env['S3_SECRET_ACCESS_KEY'],
  });

  beforeAll(async () => {
    await store.ensureBucket();
    await store.ensureBucket(); // idempotent
  });
  afterAll(() => store.destroy());

  it('stores, reads, checks and deletes an object', async () => {
    await store.put('a/b.txt', 'hello', 'text/plain');
    expect(await store.exists('a/b.txt')).toBe(true);
    expect((await store.get('a/b.txt')).toString()).toBe('hello');
    await store.delete('a/b.txt');
    expect(await store.exists('a/b.txt')).toBe(false);
  });

  it('round-trips JSON', async () => {
    await putJson(store, 'x.json', { n: 1, list: ['a'] });
    expect(await getJson(store, 'x.json')).toEqual({ n: 1, list: ['a'] });
  });

  it('streams a body larger than one part as a multipart upload', async () => {
    const body = randomBytes(12 * 1024 * 1024);
    await store.put(
      'big.bin',
      Readable.from([body.subarray(0, 5_000_000), body.subarray(5_000_000)]),
    );
    expect((await store.get('big.bin')).equals(body)).toBe(true);
  });
});
