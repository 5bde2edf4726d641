import type { Readable } from 'node:stream';

/** Bytes `start` to `end` of an object, both inclusive (HTTP's `Range: bytes=start-end`). */
export interface ByteRange {
  start: number;
  end: number;
}

/** The object-storage port. Keys are opaque to the store; callers choose a scheme. */
export interface BlobStore {
  readonly bucket: string;
  ensureBucket(): Promise<void>;
  put(key: string, body: Buffer | Readable | string, contentType?: string): Promise<void>;
  get(key: string): Promise<Buffer>;
  /**
   * The object's bytes as a stream, all of them or `range`, never buffered whole: how an original
   * is served for download. Fails like `get` for a missing object.
   */
  openRead(key: string, range?: ByteRange): Promise<Readable>;
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Resolves when the bucket is reachable (readiness). */
  ping(): Promise<void>;
}

export async function putJson(store: BlobStore, key: string, value: unknown): Promise<void> {
  await store.put(key, JSON.stringify(value), 'application/json');
}

export async function getJson(store: BlobStore, key: string): Promise<unknown> {
  return JSON.parse((await store.get(key)).toString('utf8'));
}
