import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { S3BlobStore } from '@kb/storage';

import { timed } from './backup';
import {
  type BackupManifest,
  type DatabaseDump,
  newerMigrations,
  OBJECTS_DIR,
  parseObjectEntries,
  readManifest,
  schemasOf,
} from './backup.manifest';
import { fileDigest, uploadObjects } from './object-copy';
import {
  appliedMigrations,
  databaseName,
  dropSchemas,
  pgTool,
  run,
  tableCount,
} from './postgres-tools';

export interface RestoreTargets {
  metadataUrl: string;
  vectorsUrl?: string | undefined;
  store: S3BlobStore;
  /**
   * Restore over databases that hold tables (e.g. migrated by the services of the version you
   * restore with): the backup's schemas are dropped first. Without it a non-empty database is
   * refused.
   */
  replace?: boolean;
}

export interface RestoreReport {
  manifest: BackupManifest;
  databases: string[];
  objects: number;
  tookMs: Record<string, number>;
}

function targetOf(dump: DatabaseDump, targets: RestoreTargets): string {
  const url = dump.role === 'metadata' ? targets.metadataUrl : targets.vectorsUrl;
  if (!url) throw new Error(`the backup holds the ${dump.role} database; give its URL`);
  return url;
}

/** Every check, before anything is changed: files intact, schemas not newer, targets empty. */
async function check(dir: string, manifest: BackupManifest, targets: RestoreTargets) {
  for (const dump of manifest.databases) {
    const digest = await fileDigest(join(dir, dump.file));
    if (digest.sha256 !== dump.sha256 || digest.size !== dump.size) {
      throw new Error(`${dump.file} does not match the manifest: the backup is damaged`);
    }
    const url = targetOf(dump, targets);
    const newer = newerMigrations(dump.migrations, await appliedMigrations(url));
    if (newer.length > 0) {
      throw new Error(
        `the backup is from a newer schema than database ${databaseName(url)}: it applied ${newer.join(', ')}. Restore with the version that wrote it, or newer`,
      );
    }
    const tables = await tableCount(url);
    if (tables > 0 && !targets.replace) {
      throw new Error(
        `database ${databaseName(url)} holds ${tables} tables: restore into an empty database, or pass --replace to drop the backup's schemas first`,
      );
    }
  }
  const objectsText = await readFile(join(dir, manifest.objects.file), 'utf8');
  if ((await fileDigest(join(dir, manifest.objects.file))).sha256 !== manifest.objects.sha256) {
    throw new Error(`${manifest.objects.file} does not match the manifest: the backup is damaged`);
  }
  return parseObjectEntries(objectsText);
}

/**
 * `kb admin restore <dir>`: checks everything first, then pg_restore of each database (one
 * transaction each, roles and grants as dumped), then the originals into the bucket. The services
 * must be stopped; start them afterwards and run `kb admin repair`.
 */
export async function restore(dir: string, targets: RestoreTargets): Promise<RestoreReport> {
  const manifest = await readManifest(dir);
  const tookMs: Record<string, number> = {};
  const entries = await timed(tookMs, 'check', () => check(dir, manifest, targets));
  const restored: string[] = [];
  for (const dump of manifest.databases) {
    const url = targetOf(dump, targets);
    await timed(tookMs, dump.role, async () => {
      if (targets.replace) await dropSchemas(url, schemasOf(dump.migrations));
      await run(pgTool('pg_restore'), [
        '--exit-on-error',
        '--single-transaction',
        ...(targets.replace ? ['--clean', '--if-exists'] : []),
        `--dbname=${url}`,
        join(dir, dump.file),
      ]);
    });
    restored.push(databaseName(url));
  }
  await timed(tookMs, 'objects', async () => {
    await targets.store.ensureBucket();
    await uploadObjects(targets.store, entries, join(dir, OBJECTS_DIR));
  });
  return { manifest, databases: restored, objects: entries.length, tookMs };
}
