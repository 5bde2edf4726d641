import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';

import {
  type BlobStore,
  deleteUnder,
  getBounded,
  getJson,
  getRange,
  ObjectTooLargeError,
  putJson,
} from '../../src';

/**
 * What every BlobStore promises, run by each implementation's test file (S3 against the local
 * server, the in-memory one in @kb/testing). `storeFor(bucket)` returns a store on a bucket that
 * does not exist yet; the suite creates it. Each test writes under its own key prefix.
 */
export function blobStoreConformance(storeFor: (bucket: string) => BlobStore): void {
  const bucket = `kb-conformance-${randomUUID().slice(0, 8)}`;
  let store: BlobStore;
  let prefix: string;

  beforeAll(async () => {
    store = storeFor(bucket);
    await expect(store.ping()).rejects.toThrow();
    await store.ensureBucket();
    await store.ensureBucket(); // idempotent: every replica calls it at start
  });
  beforeEach(() => {
    prefix = `${randomUUID()}/`;
  });

  it('names its bucket and answers ping once the bucket exists', async () => {
    expect(store.bucket).toBe(bucket);
    await expect(store.ping()).resolves.toBeUndefined();
  });

  it('stores, reads, checks and deletes an object', async () => {
    const key = `${prefix}a/b.txt`;
    expect(await store.exists(key)).toBe(false);
    await store.put(key, 'hello', 'text/plain');
    expect(await store.exists(key)).toBe(true);
    expect((await store.get(key)).toString()).toBe('hello');
    await store.delete(key);
    expect(await store.exists(key)).toBe(false);
  });

  it('reads back exactly the bytes of a Buffer, a UTF-8 string or a stream', async () => {
    const bytes = randomBytes(70_000);
    await store.put(`${prefix}buffer`, bytes, 'application/octet-stream');
    expect((await store.get(`${prefix}buffer`)).equals(bytes)).toBe(true);
    await store.put(`${prefix}string`, 'grüße, 世界');
    expect((await store.get(`${prefix}string`)).equals(Buffer.from('grüße, 世界', 'utf8'))).toBe(
      true,
    );
    await store.put(
      `${prefix}stream`,
      Readable.from([bytes.subarray(0, 1_000), bytes.subarray(1_000)]),
    );
    expect((await store.get(`${prefix}stream`)).equals(bytes)).toBe(true);
  });

  it('streams an object whole or a byte range of it', async () => {
    const bytes = randomBytes(20_000);
    await store.put(`${prefix}ranged`, bytes);
    const read = async (stream: Readable) => {
      const parts: Buffer[] = [];
      for await (const part of stream) parts.push(Buffer.from(part as Uint8Array));
      return Buffer.concat(parts);
    };
    expect((await read(await store.openRead(`${prefix}ranged`))).equals(bytes)).toBe(true);
    const range = await read(await store.openRead(`${prefix}ranged`, { start: 100, end: 10_099 }));
    expect(range.equals(bytes.subarray(100, 10_100))).toBe(true);
    const last = await read(
      await store.openRead(`${prefix}ranged`, { start: 19_999, end: 19_999 }),
    );
    expect(last.equals(bytes.subarray(19_999))).toBe(true);
    await expect(store.openRead(`${prefix}missing`)).rejects.toThrow();
  });

  it('stores an empty object', async () => {
    await store.put(`${prefix}empty`, Buffer.alloc(0));
    expect(await store.exists(`${prefix}empty`)).toBe(true);
    expect((await store.get(`${prefix}empty`)).length).toBe(0);
  });

  it('replaces an object written again under the same key', async () => {
    await store.put(`${prefix}k`, 'first');
    await store.put(`${prefix}k`, 'second');
    expect((await store.get(`${prefix}k`)).toString()).toBe('second');
  });

  it('keeps what was stored when the caller changes its buffers afterwards', async () => {
    const body = Buffer.from('original');
    await store.put(`${prefix}k`, body);
    body.fill(0);
    const read = await store.get(`${prefix}k`);
    read.fill(0);
    expect((await store.get(`${prefix}k`)).toString()).toBe('original');
  });

  // (Not `dir/`: S3-compatible servers over a file system answer that one as a folder.)
  it('treats keys as exact names, not prefixes', async () => {
    await store.put(`${prefix}dir/file`, 'x');
    expect(await store.exists(`${prefix}dir`)).toBe(false);
    expect(await store.exists(`${prefix}dir/fil`)).toBe(false);
    await store.delete(`${prefix}dir/fil`);
    expect(await store.exists(`${prefix}dir/file`)).toBe(true);
  });

  it('fails to read a missing object, and deleting one is a no-op', async () => {
    await expect(store.get(`${prefix}missing`)).rejects.toThrow();
    await expect(store.delete(`${prefix}missing`)).resolves.toBeUndefined();
    expect(await store.exists(`${prefix}missing`)).toBe(false);
  });

  it('lists the keys under a prefix, and deletes them (or those selected) with deleteUnder', async () => {
    await store.put(`${prefix}doc/v1/chunks.json`, 'a');
    await store.put(`${prefix}doc/v2/chunks.json`, 'b');
    await store.put(`${prefix}doc/v2/embeddings.json`, 'c');
    await store.put(`${prefix}doc-other/v1/chunks.json`, 'd');
    expect(await store.list(`${prefix}doc/`)).toEqual([
      `${prefix}doc/v1/chunks.json`,
      `${prefix}doc/v2/chunks.json`,
      `${prefix}doc/v2/embeddings.json`,
    ]);
    expect(await deleteUnder(store, `${prefix}doc/`, (key) => key.includes('/v1/'))).toBe(1);
    expect(await store.list(`${prefix}doc/`)).toHaveLength(2);
    expect(await deleteUnder(store, `${prefix}doc/`)).toBe(2);
    expect(await store.list(`${prefix}doc/`)).toEqual([]);
    expect(await store.list(`${prefix}doc-other/`)).toEqual([`${prefix}doc-other/v1/chunks.json`]);
    expect(await store.list(`${prefix}missing/`)).toEqual([]);
  });

  it('reads a byte range into memory (getRange), and bounds a whole read (getBounded)', async () => {
    const bytes = randomBytes(300_000);
    await store.put(`${prefix}ranged`, bytes);
    const middle = await getRange(store, `${prefix}ranged`, { start: 150_000, end: 150_099 });
    expect(middle.equals(bytes.subarray(150_000, 150_100))).toBe(true);
    const last = await getRange(store, `${prefix}ranged`, { start: 299_999, end: 299_999 });
    expect(last.equals(bytes.subarray(299_999))).toBe(true);
    expect((await getBounded(store, `${prefix}ranged`, 300_000)).equals(bytes)).toBe(true);
    await expect(getBounded(store, `${prefix}ranged`, 299_999)).rejects.toBeInstanceOf(
      ObjectTooLargeError,
    );
    await expect(getRange(store, `${prefix}missing`, { start: 0, end: 1 })).rejects.toThrow();
  });

  it('round-trips JSON through putJson and getJson', async () => {
    await putJson(store, `${prefix}x.json`, { n: 1, list: ['a'], nested: { ok: true } });
    expect(await getJson(store, `${prefix}x.json`)).toEqual({
      n: 1,
      list: ['a'],
      nested: { ok: true },
    });
  });
}
