import type { Command } from 'commander';

import { endpointOf, printResult, type RestFlags, restOptions } from '../client/rest-options';
import { documentsTable, listDocuments } from './collections.command';

/** `kb docs list`: the documents the caller may read. */
export function registerDocsCommand(program: Command): void {
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
}
