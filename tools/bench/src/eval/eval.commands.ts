import { type Command, InvalidArgumentError, Option } from 'commander';

import { type EvalMode, runEval } from './eval.command';

const MODES: EvalMode[] = ['hybrid', 'semantic', 'lexical', 'auto'];

export function parseModes(value: string): EvalMode[] {
  const modes = value.split(',').map((m) => m.trim());
  const unknown = modes.filter((m) => !MODES.includes(m as EvalMode));
  if (unknown.length)
    throw new InvalidArgumentError(`unknown mode ${unknown.join(', ')}; use ${MODES.join('|')}`);
  return modes as EvalMode[];
}

/** `kb-tools eval` (`npm run eval`): BEIR retrieval quality through the public APIs. */
export function registerEvalCommand(program: Command): void {
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
    .option(
      '--rerank <folder>',
      'also rerank each mode offline with this cross-encoder folder (model.onnx, tokenizer.json) and report the gain',
    )
    .option('--service-rerank', 'search with rerank: true (the service reranks within its budget)')
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
    .option(
      '--tenant-wide-every <n>',
      'upload every n-th document readable by everyone in the tenant (t:*), the rest owner-only',
      (v) => Number.parseInt(v, 10),
    )
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
        rerank?: string;
        serviceRerank?: boolean;
        documentsUrl: string;
        grpc: string;
        concurrency: number;
        tenantWideEvery?: number;
      }) => {
        const token = options.token ?? process.env['KB_TOKEN'];
        await runEval({
          dataset: options.dataset,
          modes: options.mode,
          ...(options.runOut ? { runOut: options.runOut } : {}),
          ...(options.tenant ? { tenant: options.tenant } : {}),
          ...(options.kb ? { knowledgeBase: options.kb } : {}),
          ...(token ? { token } : {}),
          ...(options.model ? { model: options.model } : {}),
          losers: options.losers,
          ...(options.rerank ? { rerankModel: options.rerank } : {}),
          ...(options.serviceRerank ? { serviceRerank: true } : {}),
          documentsUrl: options.documentsUrl,
          grpcAddress: options.grpc,
          concurrency: options.concurrency,
          ...(options.tenantWideEvery ? { tenantWideEvery: options.tenantWideEvery } : {}),
          log: (line) => process.stderr.write(`eval: ${line}\n`),
        });
      },
    );
}
