// The original file of a document version: spooled to disk by the HTTP layer, hashed, and stored
// once per content in S3 (identical uploads share one object).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';

import type { BlobStore } from '@kb/storage';

/** An upload spooled to a temporary file by the HTTP layer: never held in memory whole. */
export interface UploadedFile {
  path: string;
  originalname: string;
  mimetype: string;
  size: number;
}

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** Content-addressed blob key: identical uploads share one object. */
export const blobKeyFor = (sha256: string): string => `blobs/sha256/${sha256}`;

/** Stores the file under its content's key unless it is there already; returns the key. */
export async function storeOriginal(
  blobs: BlobStore,
  file: UploadedFile,
  sha256: string,
): Promise<string> {
  const blobKey = blobKeyFor(sha256);
  if (!(await blobs.exists(blobKey))) {
    // Streamed: bodies over one part go up as an S3 multipart upload.
    await blobs.put(blobKey, createReadStream(file.path), file.mimetype);
  }
  return blobKey;
}
