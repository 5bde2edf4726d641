import { type Command, Option } from 'commander';

import { endpointOf, printResult, type RestFlags, restOptions } from '../client/rest-options';
import {
  createKnowledgeBase,
  deleteKnowledgeBase,
  emptyKnowledgeBase,
  knowledgeBasesTable,
  knowledgeBaseStats,
  listKnowledgeBases,
  statsTable,
  summaryTable,
} from './collections.command';

/** `kb kb create|list|stats|empty|delete`: knowledge bases through document-service's REST API. */
export function registerKbCommand(program: Command): void {
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
      .option('--tag-rule <tags>', 'documents tagged with any of these comma-separated tags join')
      .addOption(
        new Option(
          '--pii <mode>',
          'personal data and secrets in its documents: counted (detect), replaced by placeholders before indexing (redact) or refused (block)',
        ).choices(['off', 'detect', 'redact', 'block']),
      ),
  ).action(
    async (
      id: string,
      options: RestFlags & {
        name?: string;
        description: string;
        metadata?: string;
        model?: string;
        tagRule?: string;
        pii?: 'off' | 'detect' | 'redact' | 'block';
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
        ...(options.pii ? { pii: options.pii } : {}),
      });
      printResult(options, created, () =>
        summaryTable([
          ['created', created.id],
          ['name', created.name],
          ['pii', created.pii],
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
}
