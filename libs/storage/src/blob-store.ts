import type { Readable } from 'node:stream';

/** The object-storage port. Keys are opaque to the store; callers choose a scheme. */
export interface BlobStore {
  readonly bucket: string;
  ensureBucket(): Promise<void>;
  put(key: string, body: Buffer | Readable | string, contentType?: string): Promise<void>;
  get(key: string): Promise<Buffer>;
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
