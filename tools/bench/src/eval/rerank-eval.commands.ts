import type { Command } from 'commander';

import { loadBeir } from './beir';
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
    .requiredOption('--rerank <folder>', 'cross-encoder folder (model.onnx, tokenizer.json)')
    .option('--truncations <tokens>', 'comma list of passage truncations', (v) =>
      v.split(',').map(Number),
    )
    .option('--depths <n>', 'comma list of depths', (v) => v.split(',').map(Number))
    .action(
      async (options: {
        dataset: string;
        run: string;
        rerank: string;
        truncations?: number[];
        depths?: number[];
      }) => {
        const dataset = await loadBeir(options.dataset);
        const rows = await rerankSweep(
          dataset,
          await readTrecRun(options.run),
          options.rerank,
          {
            ...DEFAULT_RERANK_GRID,
            ...(options.truncations ? { truncations: options.truncations } : {}),
            ...(options.depths ? { depths: options.depths } : {}),
          },
          (line) => process.stderr.write(`eval: ${line}\n`),
        );
        printRerankRows(options.dataset, rows);
      },
    );
}
