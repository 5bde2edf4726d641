import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { ObjectEntry } from './object-copy';

export const MANIFEST_FILE = 'manifest.json';
export const OBJECTS_FILE = 'objects.jsonl';
export const OBJECTS_DIR = 'objects';
export const MANIFEST_FORMAT = 'kb-backup/1';
/** The originals (`blobs/<tenant>/sha256/<sha>`); everything else in the bucket is derived. */
export const ORIGINALS_PREFIX = 'blobs/';

/** What a backup deliberately does not hold; the repair (or time) rebuilds it. Printed and kept. */
export const LEFT_OUT = [
  'S3 derived/ objects (extracted text, claim-checked chunks and embeddings): the repair re-parses the originals',
  'Redis (cached search results, generation mirror, rate-limit counters): a cache, refilled by use',
  'Kafka topics and consumer offsets: events in flight are redone by the repair',
  'PostgreSQL roles and database-level grants: the chart (or scripts/infra/pg-roles.sql) creates them',
  'secrets (AUTH_JWT_SECRET, WEBHOOK_SECRET_KEY): kept by the operator; webhook signing secrets need the same WEBHOOK_SECRET_KEY',
] as const;

/** One database's dump: which database, its file, and the migrations it had applied. */
export interface DatabaseDump {
  /** `metadata` (DATABASE_URL) or `vectors` (VECTOR_DATABASE_URL). */
  role: 'metadata' | 'vectors';
  /** The database's name when it was dumped (for messages). */
  database: string;
  /** The pg_dump custom-format file, relative to the backup directory. */
  file: string;
  size: number;
  sha256: string;
  /** Migration table → names applied: restore refuses a backup from a newer schema. */
  migrations: Record<string, string[]>;
}

export interface BackupManifest {
  format: typeof MANIFEST_FORMAT;
  createdAt: string;
  databases: DatabaseDump[];
  objects: {
    bucket: string;
    prefix: string;
    count: number;
    bytes: number;
    /** One ObjectEntry a line, relative to the backup directory; its digest guards it. */
    file: string;
    sha256: string;
  };
  /** Tenants holding documents: the repair runs once for each. */
  tenants: string[];
  leftOut: readonly string[];
  /** How long each phase took, in ms. */
  tookMs: Record<string, number>;
}

export async function readManifest(dir: string): Promise<BackupManifest> {
  const manifest = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as BackupManifest;
  if (manifest.format !== MANIFEST_FORMAT) {
    throw new Error(
      `${join(dir, MANIFEST_FILE)} is not a backup this version reads (format ${JSON.stringify(manifest.format)}, expected ${MANIFEST_FORMAT})`,
    );
  }
  return manifest;
}

export const parseObjectEntries = (text: string): ObjectEntry[] =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as ObjectEntry);

/**
 * The migrations the backup had applied that the target database does not know, as
 * `table: name`. A migration table the target lacks (an empty database, or a vector dimension it
 * never created) cannot be compared and is skipped.
 */
export function newerMigrations(
  backup: Record<string, string[]>,
  target: Record<string, string[]>,
): string[] {
  const newer: string[] = [];
  for (const [table, names] of Object.entries(backup)) {
    const known = target[table];
    if (!known) continue;
    for (const name of names) if (!known.includes(name)) newer.push(`${table}: ${name}`);
  }
  return newer;
}

/** The schemas of a database's migration tables other than `public` (dropped by --replace). */
export const schemasOf = (migrations: Record<string, string[]>): string[] =>
  [...new Set(Object.keys(migrations).map((table) => table.split('.')[0]!.replaceAll('"', '')))]
    .filter((schema) => schema !== 'public')
    .sort();
