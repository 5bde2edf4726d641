#!/usr/bin/env node

import { Command, InvalidArgumentError, Option } from 'commander';

import { registerBenchCommands } from './bench/bench.commands';
import { localToken } from './client/kb-client';
import { endpointOf, printResult, type RestFlags, restOptions } from './client/rest-options';
import {
  createKnowledgeBase,
  deleteKnowledgeBase,
  documentsTable,
  emptyKnowledgeBase,
  knowledgeBasesTable,
  knowledgeBaseStats,
  listDocuments,
  listKnowledgeBases,
  statsTable,
  summaryTable,
} from './collections/collections.command';
import { type EvalMode, runEval } from './eval/eval.command';
import { formatSummary, runIngest } from './ingest/ingest.command';
import { runMcpServer } from './mcp/mcp.command';
import { registerSourcesCommand } from './sources/sources.command';
import { formatSyncSummary, runSync } from './sync/sync.command';
import { registerWebhooksCommand } from './webhooks/webhooks.command';

const MODES: EvalMode[] = ['hybrid', 'semantic', 'lexical', 'auto'];

function parseModes(value: string): EvalMode[] {
  const modes = value.split(',').map((m) => m.trim());
  const unknown = modes.filter((m) => !MODES.includes(m as EvalMode));
  if (unknown.length)
    throw new InvalidArgumentError(`unknown mode ${unknown.join(', ')}; use ${MODES.join('|')}`);
  return modes as EvalMode[];
}

const program = new Command('kb').description('Command-line client of the knowledge base.');

const kb = program.command('kb').description('Knowledge bases as collections.');

restOptions(
  kb
    .command('create')
    .description('Create a knowledge base.')
    .argument('<id>', 'lower-case id')
    .option('--name <name>', 'display name (default: the id)')
    .option('--description <text>', 'description', '')
    .option('--metadata <json>', 'free-form metadata, a JSON object')
    .option('--model <model>', "embedding model (default: the deployment's)")
    .option('--tag-rule <tags>', 'documents tagged with any of these comma-separated tags join'),
).action(
  async (
    id: string,
    options: RestFlags & {
      name?: string;
      description: string;
      metadata?: string;
      model?: string;
      tagRule?: string;
    },
  ) => {
    const created = await createKnowledgeBase(endpointOf(options), {
      id,
      name: options.name ?? id,
      description: options.description,
      ...(options.metadata
        ? { metadata: JSON.parse(options.metadata) as Record<string, unknown> }
        : {}),
      ...(options.model ? { embeddingModel: options.model } : {}),
      ...(options.tagRule ? { tagRule: { anyOf: options.tagRule.split(',') } } : {}),
    });
    printResult(options, created, () =>
      summaryTable([
        ['created', created.id],
        ['name', created.name],
      ]),
    );
  },
);

restOptions(
  kb
    .command('list')
    .description('The knowledge bases with their status and counts (what you may read).')
    .option('--name <text>', 'only those whose name or id holds this'),
).action(async (options: RestFlags & { name?: string }) => {
  const page = await listKnowledgeBases(endpointOf(options), {
    ...(options.name ? { name: options.name } : {}),
  });
  printResult(options, page, () => knowledgeBasesTable(page.items, page.total));
});

restOptions(
  kb.command('stats').description("One knowledge base's status and counts.").argument('<id>'),
).action(async (id: string, options: RestFlags) => {
  const stats = await knowledgeBaseStats(endpointOf(options), id);
  printResult(options, stats, () => statsTable(id, stats));
});

restOptions(
  kb
    .command('empty')
    .description('Remove every document (you may read) from a knowledge base, keeping it.')
    .argument('<id>'),
).action(async (id: string, options: RestFlags) => {
  const result = await emptyKnowledgeBase(
    endpointOf(options),
    id,
    process.stderr.isTTY === true && !options.json,
  );
  printResult(options, result, () =>
    summaryTable([
      ['knowledge base', result.knowledgeBaseId],
      ['job', result.jobId],
      ['deleted_count', result.deletedCount],
      ['unlinked', result.unlinkedCount],
      ['retained by tag rule', result.retainedCount],
      ['took ms', result.tookMs],
    ]),
  );
});

restOptions(
  kb
    .command('delete')
    .description('Delete a knowledge base (refused while it holds documents, unless --cascade).')
    .argument('<id>')
    .option('--cascade', 'delete the documents only it holds and unlink the others'),
).action(async (id: string, options: RestFlags & { cascade?: boolean }) => {
  const result = await deleteKnowledgeBase(endpointOf(options), id, options.cascade === true);
  printResult(options, result, () =>
    summaryTable([
      ['deleted knowledge base', result.id],
      ['documents deleted', result.deletedCount],
      ['documents unlinked', result.unlinkedCount],
    ]),
  );
});

const docs = program.command('docs').description('Documents.');

restOptions(
  docs
    .command('list')
    .description('Documents you may read, newest first, optionally filtered.')
    .option('--kb <id>', "only this knowledge base's")
    .option(
      '--where <filter>',
      'a filter as JSON, e.g. \'{"tags":"hr","metadata.year":{"$gte":2024},"status":"indexed"}\'',
    )
    .option('--max <n>', 'at most this many', (v) => Number.parseInt(v, 10), 1000),
).action(async (options: RestFlags & { kb?: string; where?: string; max: number }) => {
  const items = await listDocuments(endpointOf(options), {
    ...(options.kb ? { knowledgeBaseId: options.kb } : {}),
    ...(options.where ? { where: options.where } : {}),
    max: options.max,
    progress: process.stderr.isTTY === true && !options.json,
  });
  printResult(options, { items }, () => documentsTable(items));
});

program
  .command('eval')
  .description(
    'Evaluate retrieval on a BEIR dataset (corpus.jsonl, queries.jsonl, qrels/test.tsv) through the public REST and gRPC APIs: nDCG@10, Recall@100, MRR@10 per mode and the queries each mode lost most on.',
  )
  .requiredOption(
    '--dataset <folder>',
    'folder with corpus.jsonl, queries.jsonl and qrels/test.tsv',
  )
  .addOption(
    new Option('--mode <modes>', 'hybrid|semantic|lexical|auto, or a comma list')
      .default(['hybrid'], 'hybrid')
      .argParser(parseModes),
  )
  .option('--run-out <file>', 'write a TREC run file (one per mode, suffixed, when several)')
  .option('--tenant <id>', 'reuse a tenant that already holds the corpus (skips ingestion)')
  .option(
    '--kb <id>',
    'evaluate this existing knowledge base (documents named <corpus id>.<ext> or with metadata externalId); uploads nothing',
  )
  .option('--token <jwt>', 'bearer token for --kb (default: KB_TOKEN, else a local admin token)')
  .option('--model <name>', 'embedding model of the knowledge base the evaluation creates')
  .option('--losers <n>', 'queries listed per mode', (v) => Number.parseInt(v, 10), 5)
  .option(
    '--documents-url <url>',
    'document-service base URL',
    process.env['KB_DOCUMENTS_URL'] ?? 'http://127.0.0.1:3001',
  )
  .option(
    '--grpc <address>',
    'query-service gRPC address',
    process.env['KB_GRPC_ADDRESS'] ?? '127.0.0.1:50051',
  )
  .option('--concurrency <n>', 'uploads in flight', (v) => Number.parseInt(v, 10), 8)
  .action(
    async (options: {
      dataset: string;
      mode: EvalMode[];
      runOut?: string;
      tenant?: string;
      kb?: string;
      token?: string;
      model?: string;
      losers: number;
      documentsUrl: string;
      grpc: string;
      concurrency: number;
    }) => {
      await runEval({
        dataset: options.dataset,
        modes: options.mode,
        ...(options.runOut ? { runOut: options.runOut } : {}),
        ...(options.tenant ? { tenant: options.tenant } : {}),
        ...(options.kb ? { knowledgeBase: options.kb } : {}),
        ...((options.token ?? process.env['KB_TOKEN'])
          ? { token: options.token ?? process.env['KB_TOKEN'] }
          : {}),
        ...(options.model ? { model: options.model } : {}),
        losers: options.losers,
        documentsUrl: options.documentsUrl,
        grpcAddress: options.grpc,
        concurrency: options.concurrency,
        log: (line) => process.stderr.write(`eval: ${line}\n`),
      });
    },
  );

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
      process.stdout.write(options.json ? `${JSON.stringify(summary)}\n` : formatSummary(summary));
      if (summary.failed > 0) process.exitCode = 1;
    },
  );

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

program
  .command('mcp')
  .description(
    'Serve the knowledge base to an MCP client on stdio (tools kb_search, kb_context, kb_get_document, kb_list_documents, kb_list_knowledge_bases, kb_stats), as the caller of KB_TOKEN.',
  )
  .option('--token <jwt>', 'bearer token (default: KB_TOKEN)', process.env['KB_TOKEN'])
  .option(
    '--documents-url <url>',
    'document-service base URL',
    process.env['KB_DOCUMENTS_URL'] ?? 'http://127.0.0.1:3001',
  )
  .option(
    '--query-url <url>',
    'query-service base URL',
    process.env['KB_QUERY_URL'] ?? 'http://127.0.0.1:3005',
  )
  .action(async (options: { token?: string; documentsUrl: string; queryUrl: string }) => {
    if (!options.token) throw new Error('a token is required: --token or KB_TOKEN (see kb token)');
    await runMcpServer({
      token: options.token,
      documentsUrl: options.documentsUrl,
      queryUrl: options.queryUrl,
    });
  });

const list = (value: string): string[] =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);

program
  .command('token')
  .description(
    'Mint a local HS256 bearer token (signed with AUTH_JWT_SECRET) for the REST and gRPC APIs.',
  )
  .requiredOption('--tenant <id>', 'the tenant the token is for')
  .requiredOption('--user <id>', 'the user (subject)')
  .option('--roles <list>', 'comma-separated roles, e.g. editor,admin', list, [])
  .option('--groups <list>', 'comma-separated groups', list, [])
  .action(async (options: { tenant: string; user: string; roles: string[]; groups: string[] }) => {
    process.stdout.write(
      `${await localToken({
        tenant: options.tenant,
        user: options.user,
        roles: options.roles,
        groups: options.groups,
      })}\n`,
    );
  });

registerBenchCommands(program);
registerSourcesCommand(program);
registerWebhooksCommand(program);

program.parseAsync().catch((error: unknown) => {
  process.stderr.write(`kb: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
