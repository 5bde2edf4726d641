import type { Command } from 'commander';

import { loadBeir } from './beir';
import { BiEncoderScorer } from './bi-encoder';
import { DEFAULT_RERANK_GRID, readTrecRun, rerankSweep } from './rerank-eval';

/** Prints one JSON line per setting, then the best setting by its paired gain. */
export function printRerankRows(
  dataset: string,
  rows: Awaited<ReturnType<typeof rerankSweep>>,
): void {
  for (const row of rows) process.stdout.write(`${JSON.stringify({ dataset, rerank: row })}\n`);
  const best = [...rows].sort((a, b) => b.gain - a.gain)[0];
  if (best) process.stdout.write(`${JSON.stringify({ dataset, rerank_best: best })}\n`);
}

/**
 * `kb-tools eval-rerank`: the rerank sweep of `eval --rerank` over a saved TREC run (e.g.
 * `eval --run-out`), without the services.
 */
export function registerRerankEvalCommand(program: Command): void {
  program
    .command('eval-rerank')
    .description(
      'Rerank a saved first-stage TREC run with a cross-encoder folder and print nDCG@10 with and without, with the paired standard error, for every depth, truncation and fusion setting.',
    )
    .requiredOption('--dataset <folder>', 'the BEIR folder the run was made on')
    .requiredOption('--run <file>', 'TREC run file of the first stage')
    .option('--rerank <folder>', 'cross-encoder folder (model.onnx, tokenizer.json)')
    .option(
      '--encoder <folder>',
      'instead of a cross-encoder, a sentence-encoder folder (<models dir>/<model id>) whose query-passage cosine is the second opinion (ADR 47); truncations do not apply',
    )
    .option('--truncations <tokens>', 'comma list of passage truncations', (v) =>
      v.split(',').map(Number),
    )
    .option('--depths <n>', 'comma list of depths', (v) => v.split(',').map(Number))
    .action(
      async (options: {
        dataset: string;
        run: string;
        rerank?: string;
        encoder?: string;
        truncations?: number[];
        depths?: number[];
      }) => {
        if (!options.rerank === !options.encoder) {
          throw new Error('eval-rerank: give exactly one of --rerank and --encoder');
        }
        const dataset = await loadBeir(options.dataset);
        const encoder = options.encoder ? await BiEncoderScorer.load(options.encoder) : undefined;
        try {
          const rows = await rerankSweep(
            dataset,
            await readTrecRun(options.run),
            encoder ?? options.rerank!,
            {
              ...DEFAULT_RERANK_GRID,
              // An encoder reads passages at its own length: one pass, not one per truncation.
              ...(encoder ? { truncations: [0] } : {}),
              ...(options.truncations ? { truncations: options.truncations } : {}),
              ...(options.depths ? { depths: options.depths } : {}),
            },
            (line) => process.stderr.write(`eval: ${line}\n`),
          );
          printRerankRows(options.dataset, rows);
        } finally {
          await encoder?.close();
        }
      },
    );
}
