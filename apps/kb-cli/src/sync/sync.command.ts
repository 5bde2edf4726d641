import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename, relative, resolve, sep } from 'node:path';

import { planSync, type SyncCounts } from '@kb/contracts';
import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { lookup } from 'mime-types';
import { minimatch } from 'minimatch';

import { KbClient, type KbEndpoints } from '../client/kb-client';
import { listFiles } from '../ingest/ingest.command';

export interface SyncOptions extends KbEndpoints {
  dir: string;
  knowledgeBaseId?: string;
  /** A folder source registered with POST /v1/sources: its knowledge base, prefix and globs. */
  sourceId?: string;
  /** The external id prefix of this folder's documents (default `folder:<folder name>/`). */
  prefix?: string;
  include: string[];
  exclude: string[];
  progress: boolean;
  log: (line: string) => void;
}

export interface SyncSummary {
  knowledgeBaseId: string;
  prefix: string;
  counts: SyncCounts;
  failures: Array<{ path: string; reason: string }>;
}

/** Whether the globs take `path` (minimatch; none included: every file). */
const selects = (include: string[], exclude: string[], path: string): boolean => {
  const matches = (glob: string) =>
    minimatch(path, glob, { dot: true, matchBase: !glob.includes('/') });
  return (include.length === 0 || include.some(matches)) && !exclude.some(matches);
};

/**
 * `kb sync <dir>` (docs/adr/0026): the folder's files against what the knowledge base holds from
 * it, by relative path as the external id (`<prefix><path>`) and content hash: new files are
 * uploaded, changed ones become the next version of their document, removed ones are deleted,
 * the same ones are left. The server's S3 sync plans with the same `planSync`.
 */
export async function runSync(options: SyncOptions): Promise<SyncSummary> {
  if (!(await stat(options.dir)).isDirectory()) throw new Error(`${options.dir} is not a folder`);
  const client = new KbClient(options);
  const source = options.sourceId ? await client.getSource(options.sourceId) : undefined;
  const knowledgeBaseId = source?.knowledgeBaseId ?? options.knowledgeBaseId;
  if (!knowledgeBaseId) throw new Error('name the knowledge base (--kb) or a source (--source)');
  const prefix =
    source?.externalIdPrefix ?? options.prefix ?? `folder:${basename(resolve(options.dir))}/`;
  const include = [...(source?.include ?? []), ...options.include];
  const exclude = [...(source?.exclude ?? []), ...options.exclude];
  const paths = (await listFiles(options.dir))
    .map((path) => ({ path, name: relative(options.dir, path).split(sep).join('/') }))
    .filter(({ name }) => selects(include, exclude, name));
  const counts: SyncCounts = { added: 0, updated: 0, unchanged: 0, deleted: 0, failed: 0 };
  const failures: SyncSummary['failures'] = [];
  // A folder source's sync is recorded by document-service, which sends `source.synced` (ADR 43).
  const syncId = source ? await client.openSourceSync(source.id) : undefined;
  let status: 'succeeded' | 'failed' = 'failed';
  const bar = options.progress
    ? new SingleBar({ clearOnComplete: false }, Presets.shades_classic)
    : undefined;
  try {
    const files = await Promise.all(
      paths.map(async ({ path, name }) => ({
        path: name,
        file: path,
        sha256: createHash('sha256')
          .update(await readFile(path))
          .digest('hex'),
      })),
    );
    const synced = (await client.listByExternalIdPrefix(prefix)).map((d) => ({
      path: d.externalId.slice(prefix.length),
      documentId: d.id,
      sha256: d.sha256,
    }));
    const plan = planSync(files, synced);
    counts.unchanged = plan.unchanged.length;
    const work = plan.add.length + plan.update.length + plan.delete.length;
    options.log(
      `${files.length} files in ${options.dir}, ${synced.length} documents from it in ${knowledgeBaseId}: ${work} to do`,
    );
    bar?.start(work, 0);
    const byPath = new Map(files.map((f) => [f.path, f.file]));
    for (const file of [...plan.add, ...plan.update]) {
      const path = byPath.get(file.path)!;
      const result = await client.tryUpload(
        basename(path),
        await readFile(path),
        lookup(path) || 'application/octet-stream',
        {
          title: file.path,
          knowledgeBaseIds: [knowledgeBaseId],
          externalId: `${prefix}${file.path}`,
        },
      );
      bar?.increment();
      if (!result.ok) {
        counts.failed += 1;
        failures.push({ path: file.path, reason: result.code });
      } else if (result.document.unchanged) counts.unchanged += 1;
      else if ('documentId' in file) counts.updated += 1;
      else counts.added += 1;
    }
    for (const gone of plan.delete) {
      const result = await client.tryDelete(gone.documentId);
      bar?.increment();
      if (result.ok) counts.deleted += 1;
      else {
        counts.failed += 1;
        failures.push({ path: gone.path, reason: result.code });
      }
    }
    status = 'succeeded';
    return { knowledgeBaseId, prefix, counts, failures };
  } finally {
    bar?.stop();
    try {
      if (source && syncId) {
        await client.finishSourceSync(source.id, syncId, { status, counts, failures });
      }
    } finally {
      client.close();
    }
  }
}

/** The closing summary table, then one line per failure. */
export function formatSyncSummary(summary: SyncSummary): string {
  const rows = Object.entries(summary.counts).map(([name, count]) => [name, String(count)]);
  const width = Math.max(...rows.map(([name]) => name!.length), 'outcome'.length);
  const countWidth = Math.max(...rows.map(([, count]) => count!.length), 'files'.length);
  const line = `+${'-'.repeat(width + 2)}+${'-'.repeat(countWidth + 2)}+`;
  const row = (a: string, b: string) => `| ${a.padEnd(width)} | ${b.padStart(countWidth)} |`;
  return `${[
    `synced into ${summary.knowledgeBaseId} (external ids ${summary.prefix}…)`,
    line,
    row('outcome', 'files'),
    line,
    ...rows.map(([a, b]) => row(a!, b!)),
    line,
    ...summary.failures.map((f) => `failed ${f.path}: ${f.reason}`),
  ].join('\n')}\n`;
}

/** `kb sync <dir>`: make a knowledge base hold what a folder holds. */
export function registerSyncCommand(program: Command): void {
  program
    .command('sync')
    .description(
      'Sync a folder into a knowledge base: new files uploaded, changed ones a new version, removed ones deleted (by relative path as the external id and content hash); a progress bar, then a summary table; exits 1 when anything failed.',
    )
    .argument('<dir>', 'the folder to sync')
    .option('--kb <id>', 'knowledge base the documents join')
    .option('--source <id>', 'a folder source (POST /v1/sources): its knowledge base and globs')
    .option('--prefix <p>', 'external id prefix of this folder (default folder:<folder name>/)')
    .option('--include <glob...>', 'only files matching one of these globs', [])
    .option('--exclude <glob...>', 'no file matching one of these globs', [])
    .option('--token <jwt>', 'bearer token (default: KB_TOKEN)', process.env['KB_TOKEN'])
    .option(
      '--documents-url <url>',
      'document-service base URL',
      process.env['KB_DOCUMENTS_URL'] ?? 'http://127.0.0.1:3001',
    )
    .option('--json', 'print the summary as one JSON object')
    .action(
      async (
        dir: string,
        options: {
          kb?: string;
          source?: string;
          prefix?: string;
          include: string[];
          exclude: string[];
          token?: string;
          documentsUrl: string;
          json?: boolean;
        },
      ) => {
        if (!options.token)
          throw new Error('a token is required: --token or KB_TOKEN (see kb token)');
        const summary = await runSync({
          dir,
          ...(options.kb ? { knowledgeBaseId: options.kb } : {}),
          ...(options.source ? { sourceId: options.source } : {}),
          ...(options.prefix ? { prefix: options.prefix } : {}),
          include: options.include,
          exclude: options.exclude,
          token: options.token,
          documentsUrl: options.documentsUrl,
          grpcAddress: '',
          progress: process.stderr.isTTY === true && !options.json,
          log: (line) => process.stderr.write(`sync: ${line}\n`),
        });
        process.stdout.write(
          options.json ? `${JSON.stringify(summary)}\n` : formatSyncSummary(summary),
        );
        if (summary.counts.failed > 0) process.exitCode = 1;
      },
    );
}
