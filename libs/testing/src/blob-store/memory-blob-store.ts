import { Readable } from 'node:stream';

import type { BlobStore, ByteRange } from '@kb/storage';

interface StoredObject {
  body: Buffer;
  contentType: string | undefined;
}

/**
 * A bucket in memory, for unit tests. It keeps what S3 keeps: bytes are copied in and out (a
 * caller changing its buffer later changes nothing stored), streams are read to the end, and a
 * missing object fails to read. The bucket exists from the start unless `created: false`.
 */
export class MemoryBlobStore implements BlobStore {
  readonly bucket: string;
  private readonly objects = new Map<string, StoredObject>();
  private created: boolean;

  constructor(options: { bucket?: string; created?: boolean } = {}) {
    this.bucket = options.bucket ?? 'test-bucket';
    this.created = options.created ?? true;
  }

  async ensureBucket(): Promise<void> {
    this.created = true;
  }

  async put(key: string, body: Buffer | Readable | string, contentType?: string): Promise<void> {
    this.objects.set(key, { body: await bytesOf(body), contentType });
  }

  async get(key: string): Promise<Buffer> {
    const object = this.objects.get(key);
    if (!object) throw new Error(`no object ${key} in bucket ${this.bucket}`);
    return Buffer.from(object.body);
  }

  async openRead(key: string, range?: ByteRange): Promise<Readable> {
    const body = await this.get(key);
    return Readable.from([range ? body.subarray(range.start, range.end + 1) : body]);
  }

  async exists(key: string): Promise<boolean> {
    return this.objects.has(key);
  }

  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }

  async list(prefix: string): Promise<string[]> {
    return this.keys().filter((key) => key.startsWith(prefix));
  }

  async ping(): Promise<void> {
    if (!this.created) throw new Error(`bucket ${this.bucket} does not exist`);
  }

  /** Every stored key, sorted: what a test checks was (or was not) written. */
  keys(): string[] {
    return [...this.objects.keys()].sort();
  }

  /** The content type an object was stored with. */
  contentTypeOf(key: string): string | undefined {
    return this.objects.get(key)?.contentType;
  }
}

async function bytesOf(body: Buffer | Readable | string): Promise<Buffer> {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (Buffer.isBuffer(body)) return Buffer.from(body);
  const parts: Buffer[] = [];
  for await (const part of body) {
    parts.push(
      typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part as Uint8Array),
    );
  }
  return Buffer.concat(parts);
}
