import { type EmbeddedChunks, embeddedChunksSchema } from '@kb/contracts';

import { checkIn, checkOut, type ClaimStore, INLINE_PAYLOAD_MAX_BYTES } from './claim-check';
import { PermanentError } from './errors';
import { claimOfTenant } from './tenant-scope';

const document = (chunks: number): EmbeddedChunks => ({
  documentId: '00000000-0000-4000-8000-000000000001',
  version: 1,
  title: 'Tides',
  model: 'm',
  dimension: 2,
  chunks: Array.from({ length: chunks }, (_, index) => ({
    index,
    text: `chunk ${index}`,
    start: 0,
    end: 7,
    sha256: 'x',
    tokenCount: 2,
    headingPath: [],
    vector: [0.5, -0.25],
  })),
});

/** An object store in a map: what a claim check needs of S3. */
class MemoryBlobStore implements ClaimStore {
  readonly bucket = 'test';
  private readonly objects = new Map<string, string>();
  put(key: string, body: string): Promise<void> {
    this.objects.set(key, body);
    return Promise.resolve();
  }
  get(key: string): Promise<Buffer> {
    const body = this.objects.get(key);
    return body === undefined
      ? Promise.reject(new Error(`no object ${key}`))
      : Promise.resolve(Buffer.from(body));
  }
  keys(): string[] {
    return [...this.objects.keys()];
  }
}

describe('claim checks', () => {
  const key = 'derived/t1/doc/v1/embeddings.m.json';

  it('carries a payload up to the limit inline and writes nothing', async () => {
    const blobs = new MemoryBlobStore();
    const small = document(3);
    const limit = Buffer.byteLength(JSON.stringify(small));
    expect(await checkIn(blobs, key, small, limit)).toEqual({ inline: small });
    expect(blobs.keys()).toEqual([]);
    expect(await checkOut(blobs, { inline: small }, embeddedChunksSchema)).toBe(small);
  });

  it('stores a payload over the limit and reads it back validated', async () => {
    const blobs = new MemoryBlobStore();
    const large = document(3);
    const limit = Buffer.byteLength(JSON.stringify(large)) - 1;
    const claim = await checkIn(blobs, key, large, limit);
    expect(claim).toEqual({ bucket: blobs.bucket, key });
    expect(await checkOut(blobs, claim, embeddedChunksSchema)).toEqual(large);
  });

  it('keeps the default limit well under Kafka’s default 1 MiB message', () => {
    expect(INLINE_PAYLOAD_MAX_BYTES).toBeLessThanOrEqual((1024 * 1024) / 2);
  });

  it('refuses a stored payload that does not match its schema', async () => {
    const blobs = new MemoryBlobStore();
    await blobs.put(key, JSON.stringify({ documentId: 'not a uuid' }));
    await expect(
      checkOut(blobs, { bucket: blobs.bucket, key }, embeddedChunksSchema),
    ).rejects.toThrow();
  });

  it('accepts inline claims and the tenant’s own keys, and dead-letters another tenant’s', () => {
    const inline = { inline: document(1) };
    expect(claimOfTenant(inline, 't1', 'embedding_error')).toBe(inline);
    const own = { bucket: 'b', key };
    expect(claimOfTenant(own, 't1', 'embedding_error')).toBe(own);
    expect(() =>
      claimOfTenant({ bucket: 'b', key: 'derived/t2/doc/v1/e.json' }, 't1', 'embedding_error'),
    ).toThrow(PermanentError);
  });
});
