import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { Command } from 'commander';

import {
  DEFAULT_PII_FIXTURE,
  evaluatePii,
  readLabelledSnippets,
  redactionThroughput,
} from './pii-eval';

/**
 * `kb-tools pii-eval`: precision and recall of the PII detector per type on the labelled set, and
 * the redaction throughput on a BEIR corpus (e.g. test/fixtures/cisi); no services needed.
 */
export function registerPiiEvalCommand(program: Command): void {
  program
    .command('pii-eval')
    .description(
      'Precision and recall of the PII detector per type on a labelled JSONL set, and redaction throughput (MB/s) on a BEIR corpus; prints one JSON line each.',
    )
    .option(
      '--fixture <file>',
      'labelled JSONL ({text, pii: [{type, value}]})',
      DEFAULT_PII_FIXTURE,
    )
    .option('--corpus <folder>', 'BEIR folder whose corpus.jsonl texts are redacted for throughput')
    .option('--rounds <n>', 'throughput passes (the best counts)', (v) => Number.parseInt(v, 10), 3)
    .action(async (options: { fixture: string; corpus?: string; rounds: number }) => {
      const snippets = await readLabelledSnippets(options.fixture);
      for (const score of evaluatePii(snippets)) {
        process.stdout.write(`${JSON.stringify({ snippets: snippets.length, ...score })}\n`);
      }
      // The worst case: text as dense in findings as the labelled set, about 1 MB of it.
      const dense = snippets.map((s) => s.text).join('\n');
      const copies = Math.ceil(1e6 / Buffer.byteLength(dense));
      const denseTexts = Array.from({ length: copies }, () => dense);
      process.stdout.write(
        `${JSON.stringify({ corpus: 'labelled set, repeated', documents: copies, ...redactionThroughput(denseTexts, options.rounds) })}\n`,
      );
      if (options.corpus) {
        const lines = (await readFile(join(options.corpus, 'corpus.jsonl'), 'utf8')).split('\n');
        const texts = lines
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as { title?: string; text: string })
          .map(({ title, text }) => (title ? `${title}\n\n${text}` : text));
        const throughput = redactionThroughput(texts, options.rounds);
        process.stdout.write(
          `${JSON.stringify({ corpus: options.corpus, documents: texts.length, ...throughput })}\n`,
        );
      }
    });
}
