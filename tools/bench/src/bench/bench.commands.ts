import { join } from 'node:path';

import { onnxModelSpec } from '@kb/embeddings';
import { lexicalMemoryLimits, processMemoryBytes } from '@kb/lexical-index';
import type { Command } from 'commander';

import { runEmptyBench } from './empty.bench';
import { runFormatsBench } from './formats.bench';
import { runIngestBench } from './ingest.bench';
import { MEMORY_LIMITS_MB, runLargeBench } from './large.bench';
import { runLexicalBench } from './lexical.bench';
import { withMachineState } from './machine';
import { runQueryBench } from './query.bench';
import { queryTable } from './query.table';
import { dropScaledTenant, scaledTenant } from './scale';

/** The services' LEXICAL_MEMORY_CHUNKS as query-service reads it (`auto` when unset). */
function lexicalMemoryChunks(value: string | undefined): number {
  return value === undefined || value === 'auto'
    ? lexicalMemoryLimits(processMemoryBytes()).chunks
    : Number(value);
}

const benchLog = (line: string): void => void process.stderr.write(`bench: ${line}\n`);

/** Where a scaled tenant is written: both indexes' databases, from the environment. */
function scaleOptions(): { databaseUrl: string; vectorDatabaseUrl: string; dimension: number } {
  const need = (name: string): string => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set (source scripts/infra/env.sh)`);
    return value;
  };
  return {
    databaseUrl: need('DATABASE_URL'),
    vectorDatabaseUrl: need('VECTOR_DATABASE_URL'),
    dimension: Number(process.env['KB_BENCH_DIMENSION'] ?? 384),
  };
}

/** `kb-tools bench query|scale|ingest|empty|large|formats|lexical` (`npm run bench -- <kind>`). */
export function registerBenchCommands(program: Command): void {
  const bench = program.command('bench').description('Benchmarks against running services.');

  bench
    .command('formats')
    .description(
      "The parser's throughput per format (in process, one core) and OCR: character accuracy on a rendered paragraph, seconds per page through the OCR pool; needs no services; prints one JSON object.",
    )
    .option('--lines <n>', 'filler sentences in each file', (v) => Number.parseInt(v, 10), 2000)
    .option('--rounds <n>', 'timed extractions per format', (v) => Number.parseInt(v, 10), 5)
    .option('--ocr-pages <n>', 'pages OCR reads per pool size', (v) => Number.parseInt(v, 10), 8)
    .action(async (options: { lines: number; rounds: number; ocrPages: number }) => {
      console.log(JSON.stringify(await runFormatsBench(options)));
    });

  bench
    .command('lexical')
    .description(
      'BM25 scoring in memory (the lexical snapshot) on synthetic spaces of 100,000 and 1,000,000 chunks: first pass and RM3, all or a third readable; needs no services; prints one JSON object.',
    )
    .option(
      '--sizes <list>',
      'chunks per space, comma-separated',
      (v) => v.split(',').map(Number),
      [100_000, 1_000_000],
    )
    .option('--rounds <n>', 'timed searches per shape', (v) => Number.parseInt(v, 10), 30)
    .action((options: { sizes: number[]; rounds: number }) => {
      console.log(JSON.stringify(runLexicalBench(options)));
    });

  bench
    .command('query')
    .description(
      'Search latency (cache miss and hit; concurrency 1, 8, 32) through gRPC, with the query-embedding floor of the model run alone; prints one JSON object.',
    )
    .requiredOption(
      '--dataset <folder>',
      'BEIR folder whose corpus is indexed and whose queries are asked',
    )
    .option('--tenant <id>', 'reuse a tenant that already holds the corpus (skips ingestion)')
    .option('--rounds <n>', 'times each query is asked per pass', (v) => Number.parseInt(v, 10), 3)
    .option(
      '--scale <copies>',
      'bench <tenant>-x<copies> instead: that many copies of the corpus, written directly into both indexes (10: 10x CISI; 52: ~100,000 chunks)',
      (v) => Number.parseInt(v, 10),
    )
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
    .option(
      '--query-url <url>',
      'query-service base URL, whose metrics confirm the ghz passes hit (or missed) the cache',
      process.env['KB_QUERY_URL'] ?? 'http://127.0.0.1:3005',
    )
    .option(
      '--ghz <binary>',
      'also run the miss and hit passes through this ghz binary, an independent client (npm run bench sets it)',
      process.env['KB_GHZ'],
    )
    .action(
      async (options: {
        dataset: string;
        tenant?: string;
        rounds: number;
        scale?: number;
        documentsUrl: string;
        grpc: string;
        ghz?: string;
        queryUrl?: string;
      }) => {
        const modelDir = process.env['EMBEDDING_MODEL_DIR'];
        const result = await withMachineState(() =>
          runQueryBench({
            dataset: options.dataset,
            ...(options.tenant ? { tenant: options.tenant } : {}),
            rounds: options.rounds,
            documentsUrl: options.documentsUrl,
            grpcAddress: options.grpc,
            // The independent reference (embed_floor) needs the model folder the services read.
            ...(modelDir
              ? {
                  model: {
                    dir: modelDir,
                    model: process.env['EMBEDDING_MODEL'] ?? 'all-MiniLM-L6-v2',
                    pooling: process.env['EMBEDDING_POOLING'] === 'cls' ? ('cls' as const) : 'mean',
                  },
                }
              : {}),
            ...(options.queryUrl ? { queryUrl: options.queryUrl } : {}),
            ...(options.ghz
              ? {
                  ghz: {
                    binary: options.ghz,
                    protoRoot: join(__dirname, '../../../../libs/contracts/proto'),
                  },
                }
              : {}),
            ...(options.scale ? { scale: { copies: options.scale, ...scaleOptions() } } : {}),
            ...(process.env['DATABASE_URL'] && process.env['VECTOR_DATABASE_URL']
              ? {
                  footprint: {
                    ...scaleOptions(),
                    ...(process.env['REDIS_URL'] ? { redisUrl: process.env['REDIS_URL'] } : {}),
                    // The services run on this machine: `auto` sizes as query-service does.
                    memoryChunks: lexicalMemoryChunks(process.env['LEXICAL_MEMORY_CHUNKS']),
                  },
                }
              : {}),
            log: benchLog,
          }),
        );
        process.stderr.write(`${queryTable(result)}\n`);
        process.stdout.write(`${JSON.stringify(result)}\n`);
      },
    );

  bench
    .command('scale')
    .description(
      "Builds (or resumes building) <tenant>-x<copies> for `bench query --scale` without the services: copies of the tenant's chunks written directly into both indexes, progress on stderr; prints what the build cost as one JSON object.",
    )
    .requiredOption('--tenant <id>', 'the tenant whose chunks are copied (a bench query tenant)')
    .requiredOption('--copies <n>', 'copies of the corpus (500: ~1,000,000 chunks of CISI)', (v) =>
      Number.parseInt(v, 10),
    )
    .option('--batch <n>', 'copies per transaction', (v) => Number.parseInt(v, 10), 10)
    .option(
      '--drop',
      'removes <tenant>-x<copies> instead, from both indexes and document-service, and rewrites those tables (do this before a CI run on the machine: the deletion e2e spec scans every table)',
    )
    .action(async (options: { tenant: string; copies: number; batch: number; drop?: boolean }) => {
      if (options.drop) {
        const target = `${options.tenant}-x${options.copies}`;
        await dropScaledTenant({ ...scaleOptions(), log: benchLog }, target);
        return;
      }
      const build = await scaledTenant(
        { ...scaleOptions(), batch: options.batch, log: benchLog },
        options.tenant,
        `${options.tenant}-x${options.copies}`,
        options.copies,
      );
      process.stdout.write(`${JSON.stringify(build)}\n`);
    });

  bench
    .command('ingest')
    .description(
      'Ingestion throughput through REST until every document is indexed, against the model run alone with onnxruntime (reference_chunks_per_s); prints one JSON object.',
    )
    .requiredOption('--dataset <folder>', 'BEIR folder whose corpus is ingested')
    .option('--concurrency <n>', 'uploads in flight', (v) => Number.parseInt(v, 10), 8)
    .option(
      '--documents-url <url>',
      'document-service base URL',
      process.env['KB_DOCUMENTS_URL'] ?? 'http://127.0.0.1:3001',
    )
    .action(async (options: { dataset: string; concurrency: number; documentsUrl: string }) => {
      const env = (name: string, fallback?: string): string => {
        const value = process.env[name] ?? fallback;
        if (value === undefined)
          throw new Error(`${name} is not set (source scripts/infra/env.sh)`);
        return value;
      };
      const result = await withMachineState(() =>
        runIngestBench({
          dataset: options.dataset,
          concurrency: options.concurrency,
          documentsUrl: options.documentsUrl,
          grpcAddress: '',
          databaseUrl: env('DATABASE_URL'),
          embeddingUrl: env('KB_EMBEDDING_URL', 'http://127.0.0.1:3003'),
          model: {
            dir: env('EMBEDDING_MODEL_DIR'),
            name: env('EMBEDDING_MODEL', 'all-MiniLM-L6-v2'),
            // Unset: the model's own pooling (the catalogue in @kb/embeddings).
            pooling:
              (['mean', 'cls'] as const).find((p) => p === process.env['EMBEDDING_POOLING']) ??
              onnxModelSpec(env('EMBEDDING_MODEL', 'all-MiniLM-L6-v2'))?.pooling ??
              'mean',
            // The services' batching (libs/config's defaults): the reference batches alike.
            batching: {
              maxBatch: Number(env('EMBEDDING_MAX_BATCH', '1')),
              maxBatchTokens: Number(env('EMBEDDING_MAX_BATCH_TOKENS', '320')),
            },
          },
          log: (line) => process.stderr.write(`bench: ${line}\n`),
        }),
      );
      process.stdout.write(`${JSON.stringify(result)}\n`);
    });

  bench
    .command('empty')
    .description(
      "Empties a knowledge base of 50,000 documents (seeded in SQL with their index rows) through REST, times the answer, the index cleanup and another tenant's indexing; prints one JSON object.",
    )
    .option('--documents <n>', 'documents to seed', (v) => Number.parseInt(v, 10), 50_000)
    .option('--chunks <n>', 'chunks per document in each index', (v) => Number.parseInt(v, 10), 1)
    .option(
      '--timeout-s <n>',
      'longest wait for the index cleanup',
      (v) => Number.parseInt(v, 10),
      900,
    )
    .option(
      '--documents-url <url>',
      'document-service base URL',
      process.env['KB_DOCUMENTS_URL'] ?? 'http://127.0.0.1:3001',
    )
    .action(
      async (options: {
        documents: number;
        chunks: number;
        timeoutS: number;
        documentsUrl: string;
      }) => {
        const databaseUrl = process.env['DATABASE_URL'];
        const vectorDatabaseUrl = process.env['VECTOR_DATABASE_URL'];
        if (!databaseUrl || !vectorDatabaseUrl) {
          throw new Error(
            'DATABASE_URL and VECTOR_DATABASE_URL must be set (source scripts/infra/env.sh)',
          );
        }
        const result = await runEmptyBench({
          documentsUrl: options.documentsUrl,
          databaseUrl,
          vectorDatabaseUrl,
          schema: process.env['KB_DOCUMENT_SCHEMA'] ?? 'document_service',
          documents: options.documents,
          chunks: options.chunks,
          timeoutMs: options.timeoutS * 1000,
          log: (line) => process.stderr.write(`bench-empty: ${line}\n`),
        });
        process.stdout.write(`${JSON.stringify(result)}\n`);
        if (!result.withinBudget) process.exitCode = 1;
      },
    );

  bench
    .command('large')
    .description(
      "One large document (a web page with inlined images) through REST until indexed, with every service's peak memory; prints one JSON object.",
    )
    .requiredOption('--dataset <folder>', 'BEIR folder whose corpus supplies the prose')
    .option('--size-mb <n>', 'document size in MB', (v) => Number.parseFloat(v), 50)
    .option('--text-chars <n>', 'characters of prose', (v) => Number.parseInt(v, 10), 300_000)
    .option(
      '--bound-mb <n>',
      "one memory bound for every service (default: each service's Helm limit)",
      (v) => Number.parseInt(v, 10),
    )
    .option(
      '--documents-url <url>',
      'document-service base URL',
      process.env['KB_DOCUMENTS_URL'] ?? 'http://127.0.0.1:3001',
    )
    .action(
      async (options: {
        dataset: string;
        sizeMb: number;
        textChars: number;
        boundMb?: number;
        documentsUrl: string;
      }) => {
        const { boundMb, ...rest } = options;
        const result = await runLargeBench({
          ...rest,
          ...(boundMb === undefined
            ? {}
            : {
                boundMb: Object.fromEntries(Object.keys(MEMORY_LIMITS_MB).map((s) => [s, boundMb])),
              }),
          log: (line) => process.stderr.write(`bench: ${line}\n`),
        });
        process.stdout.write(`${JSON.stringify(result)}\n`);
      },
    );
}
