// The original file of a document version: spooled to disk by the HTTP layer, hashed, and stored
// once per content and tenant in S3 (a tenant's identical uploads share one object).
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

import type { TenantId } from '@kb/contracts';
import type { BlobStore } from '@kb/storage';

/** An upload spooled to a temporary file by the HTTP layer: never held in memory whole. */
export interface UploadedFile {
  path: string;
  originalname: string;
  mimetype: string;
  size: number;
}

/**
 * The upload's file name as stored and shown: control characters dropped (PostgreSQL text cannot
 * hold U+0000, and none belongs in a name), at most 255 characters, `upload` when nothing is left.
 */
export function filenameOf(file: UploadedFile): string {
  const name = file.originalname.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return name.slice(0, 255) || 'upload';
}

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/**
 * Where a tenant's original lives: content-addressed within the tenant, so a tenant's identical
 * uploads share one object while another tenant's never do. (A shared key let a delete answer
 * `blobDeleted: false` when another tenant held the same file: a cross-tenant oracle.) Originals
 * stored before this scheme keep their shared `blobs/sha256/<sha>` key, recorded in their row.
 */
export const blobKeyFor = (tenantId: TenantId, sha256: string): string =>
  `blobs/${tenantId}/sha256/${sha256}`;

/**
 * Stores the file under the tenant's key for its content and returns the key. Always written,
 * even when the object is there: skipping the upload made an upload of content that a document
 * the caller cannot read already holds answer measurably faster (review M4). The bytes are the
 * same, so rewriting them changes nothing; a readable duplicate never gets here.
 */
export async function storeOriginal(
  blobs: BlobStore,
  tenantId: TenantId,
  file: UploadedFile,
  sha256: string,
): Promise<string> {
  const blobKey = blobKeyFor(tenantId, sha256);
  // Streamed: bodies over one part go up as an S3 multipart upload.
  await blobs.put(blobKey, createReadStream(file.path), file.mimetype);
  return blobKey;
}

/**
 * A JSON upload's text spooled like a multipart file (`dir`: UPLOAD_TMP_DIR), so the rest of the
 * upload (hash, S3, versions) is the same. The caller removes it (`path`) when done.
 */
export async function spoolText(
  dir: string,
  text: string,
  name: string,
  mimetype: string,
): Promise<UploadedFile> {
  const path = join(dir, `kb-json-${randomUUID()}`);
  const bytes = Buffer.from(text, 'utf8');
  await writeFile(path, bytes, { mode: 0o600 });
  return { path, originalname: name, mimetype, size: bytes.length };
}
