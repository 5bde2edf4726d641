import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { S3BlobStore } from '@kb/storage';

import {
  type BackupManifest,
  type DatabaseDump,
  LEFT_OUT,
  MANIFEST_FILE,
  MANIFEST_FORMAT,
  OBJECTS_DIR,
  OBJECTS_FILE,
  ORIGINALS_PREFIX,
} from './backup.manifest';
import { downloadObjects, fileDigest } from './object-copy';
import { appliedMigrations, databaseName, pgTool, run, tenantsOf } from './postgres-tools';

export interface BackupSources {
  /** document-service, acl, webhooks, the lexical index and the embedding cache (DATABASE_URL). */
  metadataUrl: string;
  /** pgvector's database (VECTOR_DATABASE_URL); absent with Pinecone. */
  vectorsUrl?: string | undefined;
  store: S3BlobStore;
}

/** Times `work` into `tookMs[phase]`. */
export async function timed<T>(
  tookMs: Record<string, number>,
  phase: string,
  work: () => Promise<T>,
): Promise<T> {
  const started = Date.now();
  try {
    return await work();
  } finally {
    tookMs[phase] = Date.now() - started;
  }
}

async function dumpDatabase(
  dir: string,
  role: DatabaseDump['role'],
  url: string,
): Promise<DatabaseDump> {
  const file = join('postgres', `${role}.dump`);
  // Recorded before the dump: a migration applied during it shows up as a mismatch at restore.
  const migrations = await appliedMigrations(url);
  await run(pgTool('pg_dump'), ['--format=custom', `--file=${join(dir, file)}`, `--dbname=${url}`]);
  return {
    role,
    database: databaseName(url),
    file,
    ...(await fileDigest(join(dir, file))),
    migrations,
  };
}

/**
 * `kb admin backup <dir>`: each database with pg_dump (custom format), then the originals from S3,
 * then the manifest (written last: a directory without one is an unfinished backup). The metadata
 * database is dumped first, so every original a dumped document names is copied unless it was
 * deleted meanwhile.
 */
export async function backup(dir: string, sources: BackupSources): Promise<BackupManifest> {
  if (existsSync(join(dir, MANIFEST_FILE))) {
    throw new Error(`${dir} already holds a backup (${MANIFEST_FILE}); choose an empty directory`);
  }
  await mkdir(join(dir, 'postgres'), { recursive: true });
  const tookMs: Record<string, number> = {};
  const databases = [
    await timed(tookMs, 'metadata', () => dumpDatabase(dir, 'metadata', sources.metadataUrl)),
  ];
  if (sources.vectorsUrl && sources.vectorsUrl !== sources.metadataUrl) {
    const url = sources.vectorsUrl;
    databases.push(await timed(tookMs, 'vectors', () => dumpDatabase(dir, 'vectors', url)));
  }
  const tenants = await tenantsOf(sources.metadataUrl);
  const entries = await timed(tookMs, 'objects', () =>
    downloadObjects(sources.store, ORIGINALS_PREFIX, join(dir, OBJECTS_DIR)),
  );
  await writeFile(
    join(dir, OBJECTS_FILE),
    entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''),
  );
  const manifest: BackupManifest = {
    format: MANIFEST_FORMAT,
    createdAt: new Date().toISOString(),
    databases,
    objects: {
      bucket: sources.store.bucket,
      prefix: ORIGINALS_PREFIX,
      count: entries.length,
      bytes: entries.reduce((sum, entry) => sum + entry.size, 0),
      file: OBJECTS_FILE,
      sha256: (await fileDigest(join(dir, OBJECTS_FILE))).sha256,
    },
    tenants,
    leftOut: LEFT_OUT,
    tookMs,
  };
  await writeFile(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}
