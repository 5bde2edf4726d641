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
  /** Every key that starts with `prefix`, in key order (a prefix, not a folder: `a/b` lists `a/bc`). */
  list(prefix: string): Promise<string[]>;
  /** Resolves when the bucket is reachable (readiness). */
  ping(): Promise<void>;
}

export async function putJson(store: BlobStore, key: string, value: unknown): Promise<void> {
  await store.put(key, JSON.stringify(value), 'application/json');
}

export async function getJson(store: BlobStore, key: string): Promise<unknown> {
  return JSON.parse((await store.get(key)).toString('utf8'));
}

/** An object (or a range of one) holds more bytes than its reader allows. */
export class ObjectTooLargeError extends Error {
  constructor(
    readonly key: string,
    readonly maxBytes: number,
  ) {
    super(`s3 object ${key} holds more than ${maxBytes} bytes`);
    this.name = 'ObjectTooLargeError';
  }
}

/**
 * Reads at most `maxBytes` of an object (or of `range`) into memory, and fails with
 * `ObjectTooLargeError` as soon as more arrive, without reading the rest: a bounded `get`.
 */
export async function getBounded(
  store: BlobStore,
  key: string,
  maxBytes: number,
  range?: ByteRange,
): Promise<Buffer> {
  const body = await store.openRead(key, range);
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const part of body) {
      const bytes = typeof part === 'string' ? Buffer.from(part) : (part as Buffer);
      size += bytes.length;
      if (size > maxBytes) throw new ObjectTooLargeError(key, maxBytes);
      parts.push(bytes);
    }
  } finally {
    body.destroy();
  }
  return Buffer.concat(parts, size);
}

/**
 * Bytes `range.start` to `range.end` (inclusive) of an object: an S3 range read, never the whole
 * object. A server that answered more than the range is an error, not a larger answer.
 */
export async function getRange(store: BlobStore, key: string, range: ByteRange): Promise<Buffer> {
  return getBounded(store, key, range.end - range.start + 1, range);
}

/**
 * Deletes every object under `prefix` (that `only` selects, when given) and returns how many.
 * Objects go one by one: S3-compatible servers do not all accept a multi-object delete, and the
 * callers remove a handful per document.
 */
export async function deleteUnder(
  store: BlobStore,
  prefix: string,
  only: (key: string) => boolean = () => true,
): Promise<number> {
  const keys = (await store.list(prefix)).filter(only);
  for (const key of keys) await store.delete(key);
  return keys.length;
}
