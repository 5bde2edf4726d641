import {
  type DocumentOperations,
  type DocumentServiceClient,
  documentServiceClient,
  type JsonOf,
} from '@kb/api-client';
import type { Command } from 'commander';

import { answerOf } from '../client/rest-call';
import { endpointOf, printResult, type RestFlags, restOptions } from '../client/rest-options';
import type { RestEndpoint } from '../collections/collections.command';
import { summaryTable } from '../collections/collections.command';
import { formatTable } from '../collections/table';

export type Source = JsonOf<DocumentOperations['getSource']>;
export type Sync = JsonOf<DocumentOperations['getSourceSync']>;

const clientOf = (endpoint: RestEndpoint): DocumentServiceClient =>
  documentServiceClient({ baseUrl: endpoint.documentsUrl, token: endpoint.token });

/**
 * Starts a server-side sync in the background and follows it until it has finished (`poll` ms
 * apart), so a large bucket never outlasts an HTTP request; `detach` answers the running sync.
 */
export async function syncSource(
  endpoint: RestEndpoint,
  id: string,
  options: { detach: boolean; pollMs: number; onPoll?: (sync: Sync) => void },
): Promise<Sync> {
  const client = clientOf(endpoint);
  let sync: Sync = await answerOf(
    client.POST('/v1/sources/{id}/sync', {
      params: { path: { id }, query: { wait: 'false' } },
    }),
  );
  while (!options.detach && sync.status === 'running') {
    await new Promise((resolve) => setTimeout(resolve, options.pollMs));
    const syncId = sync.id;
    sync = await answerOf(
      client.GET('/v1/sources/{id}/syncs/{syncId}', { params: { path: { id, syncId } } }),
    );
    options.onPoll?.(sync);
  }
  return sync;
}

export const syncTable = (sync: Sync): string =>
  summaryTable([
    ['sync', sync.id],
    ['status', sync.status],
    ...Object.entries(sync.counts),
    ...sync.failures.map(({ path, reason }): [string, string] => [`failed: ${path}`, reason]),
  ]);

const sourcesTable = (items: Source[]): string =>
  formatTable(
    ['id', 'name', 'kind', 'knowledge base', 'bucket/prefix', 'include', 'exclude'],
    items.map((s) => [
      s.id,
      s.name,
      s.kind,
      s.knowledgeBaseId,
      s.kind === 's3' ? `${s.bucket}/${s.prefix}` : s.prefix,
      s.include.join(','),
      s.exclude.join(','),
    ]),
  );

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** `kb sources create|list|sync|syncs|delete`: sources that sync into a knowledge base. */
export function registerSourcesCommand(program: Command): void {
  const sources = program
    .command('sources')
    .description('Sources that sync into a knowledge base: S3 prefixes (server) and folders.');

  restOptions(
    sources
      .command('create')
      .description(
        'Bind an S3 bucket and prefix (or, without --bucket, a folder) to a knowledge base.',
      )
      .requiredOption('--name <name>', 'what the source is')
      .requiredOption('--kb <id>', 'the knowledge base it syncs into')
      .option('--bucket <bucket>', 'an S3 bucket of the deployment (else: a folder source)')
      .option('--prefix <prefix>', 'keys under this prefix (a file is its key without it)', '')
      .option('--include <glob>', 'a glob a path must match (repeatable)', collect, [])
      .option('--exclude <glob>', 'a glob a path must not match (repeatable)', collect, [])
      .option(
        '--schedule <cron>',
        'an S3 source: sync it on this cron expression, e.g. "0 3 * * *"',
      )
      .option('--timezone <zone>', 'the IANA time zone of --schedule (default UTC)'),
  ).action(
    async (
      options: RestFlags & {
        name: string;
        kb: string;
        bucket?: string;
        prefix: string;
        include: string[];
        exclude: string[];
        schedule?: string;
        timezone?: string;
      },
    ) => {
      const source = await answerOf(
        clientOf(endpointOf(options)).POST('/v1/sources', {
          body: {
            name: options.name,
            knowledgeBaseId: options.kb,
            kind: options.bucket ? 's3' : 'folder',
            ...(options.bucket ? { bucket: options.bucket } : {}),
            prefix: options.prefix,
            include: options.include,
            exclude: options.exclude,
            ...(options.schedule ? { schedule: options.schedule } : {}),
            ...(options.timezone ? { timezone: options.timezone } : {}),
          },
        }),
      );
      printResult(options, source, () => sourcesTable([source]));
    },
  );

  restOptions(sources.command('list').description("The tenant's sources.")).action(
    async (options: RestFlags) => {
      const { items } = await answerOf(clientOf(endpointOf(options)).GET('/v1/sources'));
      printResult(options, { items }, () => sourcesTable(items));
    },
  );

  restOptions(
    sources
      .command('sync')
      .argument('<id>', 'an S3 source (a folder source syncs with `kb sync <dir> --source <id>`)')
      .description('Sync an S3 source on the server and wait for it, printing its counts.')
      .option('--detach', 'start it and print the running sync without waiting')
      .option('--poll-ms <ms>', 'how often to look at a running sync', (v) => Number(v), 1_000),
  ).action(async (id: string, options: RestFlags & { detach?: boolean; pollMs: number }) => {
    const sync = await syncSource(endpointOf(options), id, {
      detach: options.detach === true,
      pollMs: options.pollMs,
      ...(process.stderr.isTTY && !options.json
        ? { onPoll: (s: Sync) => process.stderr.write(`\rsync ${s.id}: ${s.status}…`) }
        : {}),
    });
    printResult(options, sync, () => syncTable(sync));
    if (sync.status === 'failed' || sync.counts.failed > 0) process.exitCode = 1;
  });

  restOptions(
    sources
      .command('syncs')
      .argument('<id>', 'source id')
      .description("A source's sync history, newest first.")
      .option('--limit <n>', 'syncs (at most 100)', (v) => Number.parseInt(v, 10), 20),
  ).action(async (id: string, options: RestFlags & { limit: number }) => {
    const { items } = await answerOf(
      clientOf(endpointOf(options)).GET('/v1/sources/{id}/syncs', {
        params: { path: { id }, query: { limit: options.limit } },
      }),
    );
    printResult(options, { items }, () =>
      formatTable(
        [
          'sync',
          'status',
          'added',
          'updated',
          'unchanged',
          'deleted',
          'failed',
          'started',
          'finished',
        ],
        items.map((s) => [
          s.id,
          s.status,
          s.counts.added,
          s.counts.updated,
          s.counts.unchanged,
          s.counts.deleted,
          s.counts.failed,
          s.startedAt,
          s.finishedAt ?? '',
        ]),
      ),
    );
  });

  restOptions(
    sources
      .command('delete')
      .argument('<id>', 'source id')
      .description('Delete a source and its history; the documents it brought stay.'),
  ).action(async (id: string, options: RestFlags) => {
    const deleted = await answerOf(
      clientOf(endpointOf(options)).DELETE('/v1/sources/{id}', { params: { path: { id } } }),
    );
    printResult(options, deleted, () => `deleted source ${deleted.sourceId}\n`);
  });
}
