import { join } from 'node:path';

import type { Command } from 'commander';

import { ROOT } from '../launcher/services.launcher';
import { runChaos } from './chaos.run';

const int = (v: string): number => Number.parseInt(v, 10);

/**
 * `kb-tools chaos` (`npm run chaos`): fault injection during an ingest. It kills and stops the
 * local servers that infra:up started, so it needs a machine (or a KB_HOME and port block) of
 * its own. Options default to the KB_CHAOS_* variables test/e2e/chaos.e2e-spec.ts sets.
 */
export function registerChaosCommand(program: Command): void {
  const env = process.env;
  program
    .command('chaos')
    .description(
      'Ingest documents while services are SIGKILLed and Kafka, PostgreSQL, Redis and S3 are stopped in turn, searching all along; then check every document is indexed exactly once. Prints {"chaos":{...}}; exits 1 when a promise was broken.',
    )
    .option('--documents <n>', 'documents ingested', int, Number(env['KB_CHAOS_DOCUMENTS'] ?? 1000))
    .option(
      '--faults <names>',
      'only the faults whose names contain one of these (comma-separated; default all)',
      env['KB_CHAOS_FAULTS'] ?? '',
    )
    .option(
      '--base-port <n>',
      "the services' ports: HTTP base+1 …, gRPC 20000 + base % 1000 + n",
      int,
      Number(env['KB_CHAOS_BASE_PORT'] ?? 7000),
    )
    .option(
      '--settle-s <n>',
      'longest wait for the pipeline after the faults',
      int,
      Number(env['KB_CHAOS_SETTLE_S'] ?? 900),
    )
    .option(
      '--spread-s <n>',
      'seconds the uploads are spread over (default: 35 a fault)',
      int,
      env['KB_CHAOS_SPREAD_S'] ? Number(env['KB_CHAOS_SPREAD_S']) : undefined,
    )
    .option(
      '--dataset <folder>',
      'BEIR folder whose corpus supplies the text',
      env['KB_BENCH_DATASET'] ?? join(ROOT, 'test', 'fixtures', 'cisi'),
    )
    .action(
      async (options: {
        documents: number;
        faults: string;
        basePort: number;
        settleS: number;
        spreadS?: number;
        dataset: string;
      }) => {
        const databaseUrl = env['DATABASE_URL'];
        const vectorDatabaseUrl = env['VECTOR_DATABASE_URL'];
        if (!databaseUrl || !vectorDatabaseUrl) {
          throw new Error(
            'DATABASE_URL and VECTOR_DATABASE_URL must be set (source scripts/infra/env.sh)',
          );
        }
        const { summary, broken } = await runChaos(
          {
            documents: options.documents,
            basePort: options.basePort,
            settleMs: options.settleS * 1000,
            ...(options.spreadS === undefined ? {} : { spreadS: options.spreadS }),
            faults: options.faults.split(',').filter(Boolean),
            dataset: options.dataset,
            logDir: env['KB_LOG_DIR'] ?? '.',
            databaseUrl,
            vectorDatabaseUrl,
          },
          (line) => process.stderr.write(`chaos: ${line}\n`),
        );
        process.stdout.write(`${JSON.stringify({ chaos: summary })}\n`);
        if (broken > 0) process.exitCode = 1;
      },
    );
}
