import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';

import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { lookup } from 'mime-types';

import { KbClient, type KbEndpoints, mapPool } from '../client/kb-client';

export interface IngestOptions extends KbEndpoints {
  dir: string;
  knowledgeBaseId: string;
  concurrency: number;
  /** How long to wait for the last document to reach `indexed` or `failed`. */
  timeoutMs: number;
  /** Draw progress bars (on a terminal); otherwise a line per phase. */
  progress: boolean;
  log: (line: string) => void;
}

export interface IngestOutcome {
  path: string;
  outcome: 'indexed' | 'duplicate' | 'failed';
  documentId?: string;
  /** Why it failed: the API's error code or the document's failure reason. */
  reason?: string;
  detail?: string;
}

export interface IngestSummary {
  files: number;
  indexed: number;
  duplicate: number;
  failed: number;
  outcomes: IngestOutcome[];
}

/** Every file below `dir`, recursively, in a stable order; hidden files and folders are skipped. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .filter(
      (path) =>
        !relative(dir, path)
          .split(/[\\/]/)
          .some((part) => part.startsWith('.')),
    );
  return files.sort();
}

/**
 * Bulk ingest: uploads every file below a folder into one knowledge base with bounded
 * concurrency, waits until each new document is indexed or failed, and summarizes. Nothing is
 * dropped silently: a refused upload and a failed document both come back with their reason.
 */
export async function runIngest(options: IngestOptions): Promise<IngestSummary> {
  if (!(await stat(options.dir)).isDirectory()) throw new Error(`${options.dir} is not a folder`);
  const files = await listFiles(options.dir);
  const client = new KbClient(options);
  const bar = options.progress
    ? new SingleBar({ clearOnComplete: false }, Presets.shades_classic)
    : undefined;
  try {
    options.log(
      `uploading ${files.length} files from ${options.dir} to ${options.knowledgeBaseId}`,
    );
    bar?.start(files.length, 0);
    const outcomes = await mapPool(
      files,
      options.concurrency,
      async (path): Promise<IngestOutcome> => {
        const name = relative(options.dir, path);
        const result = await client.tryUpload(
          name,
          await readFile(path),
          lookup(path) || 'application/octet-stream',
          // The file's path below the folder names it (uploads keep only the base name).
          { title: name, knowledgeBaseIds: [options.knowledgeBaseId] },
        );
        bar?.increment();
        if (!result.ok)
          return { path: name, outcome: 'failed', reason: result.code, detail: result.message };
        return result.document.duplicate
          ? { path: name, outcome: 'duplicate', documentId: result.document.id }
          : { path: name, outcome: 'indexed', documentId: result.document.id };
      },
    );
    bar?.stop();
    await waitFinal(
      client,
      outcomes.filter((o) => o.outcome === 'indexed'),
      options,
      bar,
    );
    return {
      files: files.length,
      indexed: outcomes.filter((o) => o.outcome === 'indexed').length,
      duplicate: outcomes.filter((o) => o.outcome === 'duplicate').length,
      failed: outcomes.filter((o) => o.outcome === 'failed').length,
      outcomes,
    };
  } finally {
    bar?.stop();
    client.close();
  }
}

/** Polls the new documents until each is final; a failed one or one still pending at the deadline counts as failed. */
async function waitFinal(
  client: KbClient,
  pending: IngestOutcome[],
  options: IngestOptions,
  bar: SingleBar | undefined,
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let waiting = [...pending];
  options.log(`waiting for ${waiting.length} documents to be indexed`);
  bar?.start(pending.length, 0);
  while (waiting.length > 0) {
    const states = await mapPool(waiting, 8, (o) => client.getDocument(o.documentId!));
    waiting = waiting.filter((outcome, i) => {
      const document = states[i]!;
      if (document.status === 'indexed') return false;
      if (document.status === 'failed') {
        Object.assign(outcome, {
          outcome: 'failed',
          reason: document.failure?.reason ?? 'failed',
          detail: document.failure?.detail ?? '',
        });
        return false;
      }
      return true;
    });
    bar?.update(pending.length - waiting.length);
    if (waiting.length === 0) break;
    if (Date.now() > deadline) {
      for (const outcome of waiting) {
        Object.assign(outcome, {
          outcome: 'failed',
          reason: 'timeout',
          detail: 'not final in time',
        });
      }
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  bar?.stop();
}

/** The closing summary: counts, then one line per failure with its reason. */
export function formatSummary(summary: IngestSummary): string {
  const lines = [
    `${summary.files} files: ${summary.indexed} indexed, ${summary.duplicate} duplicate, ${summary.failed} failed`,
    ...summary.outcomes
      .filter((o) => o.outcome === 'failed')
      .map((o) => `failed ${o.path}: ${o.reason}${o.detail ? ` (${o.detail})` : ''}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** `kb ingest <dir>`: upload a folder, wait until indexed, summarize. */
export function registerIngestCommand(program: Command): void {
  program
    .command('ingest')
    .description(
      'Upload a folder recursively into a knowledge base, wait until each document is indexed, and summarize; exits 1 when anything failed.',
    )
    .argument('<dir>', 'the folder to upload')
    .requiredOption('--kb <id>', 'knowledge base the documents join')
    .option('--token <jwt>', 'bearer token (default: KB_TOKEN)', process.env['KB_TOKEN'])
    .option(
      '--documents-url <url>',
      'document-service base URL',
      process.env['KB_DOCUMENTS_URL'] ?? 'http://127.0.0.1:3001',
    )
    .option('--concurrency <n>', 'uploads in flight', (v) => Number.parseInt(v, 10), 4)
    .option('--timeout <s>', 'seconds to wait for indexing', (v) => Number.parseInt(v, 10), 600)
    .option('--json', 'print the summary as one JSON object')
    .action(
      async (
        dir: string,
        options: {
          kb: string;
          token?: string;
          documentsUrl: string;
          concurrency: number;
          timeout: number;
          json?: boolean;
        },
      ) => {
        if (!options.token)
          throw new Error('a token is required: --token or KB_TOKEN (see kb token)');
        const summary = await runIngest({
          dir,
          knowledgeBaseId: options.kb,
          token: options.token,
          documentsUrl: options.documentsUrl,
          grpcAddress: '',
          concurrency: options.concurrency,
          timeoutMs: options.timeout * 1000,
          progress: process.stderr.isTTY === true && !options.json,
          log: (line) => process.stderr.write(`ingest: ${line}\n`),
        });
        process.stdout.write(
          options.json ? `${JSON.stringify(summary)}\n` : formatSummary(summary),
        );
        if (summary.failed > 0) process.exitCode = 1;
      },
    );
}
