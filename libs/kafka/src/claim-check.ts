import type { InlineOrRef } from '@kb/contracts';
import type { z } from 'zod';

/**
 * The largest payload an event carries inline, as JSON bytes. Kafka refuses a message over the
 * broker's `message.max.bytes` (1 MiB by default); a quarter of it leaves room for the envelope
 * and for other messages batched with it. Above it the payload goes to S3 (claim check).
 */
export const INLINE_PAYLOAD_MAX_BYTES = 256 * 1024;

/** What a claim check needs of the object store (`@kb/storage`'s `BlobStore` is one). */
export interface ClaimStore {
  readonly bucket: string;
  put(key: string, body: string, contentType?: string): Promise<void>;
  get(key: string): Promise<Buffer>;
}

/**
 * `value` as an event carries it: inline when its JSON is at most `maxBytes`, otherwise stored
 * under `key` and referenced. A replay rewrites the same key, so either way is idempotent.
 */
export async function checkIn<T>(
  store: ClaimStore,
  key: string,
  value: T,
  maxBytes: number = INLINE_PAYLOAD_MAX_BYTES,
): Promise<InlineOrRef<T>> {
  const json = JSON.stringify(value);
  if (Buffer.byteLength(json) <= maxBytes) return { inline: value };
  await store.put(key, json, 'application/json');
  return { bucket: store.bucket, key };
}

/**
 * The payload an event carries or references. Inline payloads were validated with the event; a
 * stored one is validated here. Check the reference's tenant first (`claimOfTenant`).
 */
export async function checkOut<T>(
  store: ClaimStore,
  claim: InlineOrRef<T>,
  schema: z.ZodType<T>,
): Promise<T> {
  if ('inline' in claim) return claim.inline;
  return schema.parse(JSON.parse((await store.get(claim.key)).toString('utf8')));
}
