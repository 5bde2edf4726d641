import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import type { S3BlobStore } from '@kb/storage';

/** One object of the backup: its key, its size and the SHA-256 of its bytes. */
export interface ObjectEntry {
  key: string;
  size: number;
  sha256: string;
}

/** Objects copied at once: S3 requests overlap, the disk and the CPU stay busy. */
const PARALLEL = 8;

/** A stream that counts and hashes what passes through it. */
function measuring(): Transform & { size: () => number; sha256: () => string } {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  return Object.assign(stream, { size: () => size, sha256: () => hash.digest('hex') });
}

/** Where the object `key` is kept under `dir` (keys are S3 paths: folders on disk). */
const fileOf = (dir: string, key: string): string => {
  if (key.split('/').some((part) => part === '..' || part === '')) {
    throw new Error(`object key ${JSON.stringify(key)} cannot be kept as a file`);
  }
  return join(dir, key);
};

async function inParallel<T, R>(items: T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, worker));
  return results;
}

/** Streams every object under `prefix` into `dir`, hashing on the way; the manifest's entries. */
export async function downloadObjects(
  store: S3BlobStore,
  prefix: string,
  dir: string,
): Promise<ObjectEntry[]> {
  const keys = (await store.list(prefix)).sort();
  return inParallel(keys, async (key) => {
    const file = fileOf(dir, key);
    await mkdir(dirname(file), { recursive: true });
    const meter = measuring();
    await pipeline(await store.openRead(key), meter, createWriteStream(file));
    return { key, size: meter.size(), sha256: meter.sha256() };
  });
}

/**
 * Streams the backup's objects from `dir` into the store. Each file is checked against its entry
 * (size and SHA-256) before it is uploaded, so a damaged backup stops the restore.
 */
export async function uploadObjects(
  store: S3BlobStore,
  entries: ObjectEntry[],
  dir: string,
): Promise<void> {
  await inParallel(entries, async (entry) => {
    const file = fileOf(dir, entry.key);
    const hash = createHash('sha256');
    await pipeline(createReadStream(file), hash);
    const { size } = await stat(file);
    const sha256 = hash.digest('hex');
    if (size !== entry.size || sha256 !== entry.sha256) {
      throw new Error(
        `object ${entry.key}: the backup's file is ${size} bytes, sha256 ${sha256}; the manifest says ${entry.size}, ${entry.sha256}`,
      );
    }
    await store.put(entry.key, createReadStream(file));
  });
}

/** SHA-256 and size of one file of the backup (a database dump). */
export async function fileDigest(file: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return { size: (await stat(file)).size, sha256: hash.digest('hex') };
}
