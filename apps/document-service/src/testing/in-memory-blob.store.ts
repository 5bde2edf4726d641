import type { BlobStore } from '@kb/storage';
import type { Readable } from 'node:stream';

/**
 * A `BlobStore` in a Map, for document-service's unit specs. (libs/testing is to get a shared
 * one that passes the blob-store conformance suite; this one can go when it lands.)
 */
export class InMemoryBlobStore implements BlobStore {
  readonly objects = new Map<string, { body: Buffer; contentType: string | undefined }>();

  constructor(readonly bucket = 'kb-documents') {}

  async ensureBucket(): Promise<void> {}

  async put(key: string, body: Buffer | Readable | string, contentType?: string): Promise<void> {
    this.objects.set(key, { body: await bufferOf(body), contentType });
  }

  async get(key: string): Promise<Buffer> {
    const object = this.objects.get(key);
    if (!object) throw new Error(`no object ${key}`);
    return object.body;
  }

  async exists(key: string): Promise<boolean> {
    return this.objects.has(key);
  }

  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }

  async ping(): Promise<void> {}
}

async function bufferOf(body: Buffer | Readable | string): Promise<Buffer> {
  if (typeof body === 'string') return Buffer.from(body);
  if (Buffer.isBuffer(body)) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}
