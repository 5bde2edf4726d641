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
import { formatTable } from '../collections/table';

export type Hold = JsonOf<DocumentOperations['getHold']>;

const clientOf = (endpoint: RestEndpoint): DocumentServiceClient =>
  documentServiceClient({ baseUrl: endpoint.documentsUrl, token: endpoint.token });

/** What a hold covers, in a table cell. */
export const subjectOf = (hold: Hold): string =>
  hold.scope === 'knowledge_base'
    ? `knowledge base ${hold.knowledgeBaseId ?? ''}`
    : hold.scope === 'documents'
      ? `${hold.documentIds?.length ?? 0} document(s)`
      : `where ${JSON.stringify(hold.where ?? {})}`;

export const holdsTable = (items: Hold[]): string =>
  formatTable(
    ['id', 'name', 'state', 'covers', 'held', 'placed by', 'placed', 'released'],
    items.map((h) => [
      h.id,
      h.name,
      h.state,
      subjectOf(h),
      h.heldDocuments ?? '',
      h.placedBy,
      h.placedAt,
      h.releasedAt ?? '',
    ]),
  );

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/**
 * `kb holds place|list|show|release` (docs/adr/0052): legal holds, tenant admins only. A held
 * document cannot be deleted by anyone or anything until the hold is released.
 */
export function registerHoldsCommand(program: Command): void {
  const holds = program
    .command('holds')
    .description('Legal holds: documents under a hold cannot be deleted (tenant admins).');

  restOptions(
    holds
      .command('place')
      .description('Place a named hold on a knowledge base, some documents, or a filter.')
      .requiredOption('--name <name>', 'the name every refusal shows, e.g. "Case 2026-114"')
      .option('--reason <text>', 'why', '')
      .option('--kb <id>', 'hold every document in this knowledge base')
      .option('--document <id>', 'hold this document (repeatable)', collect, [])
      .option(
        '--where <json>',
        'hold what this listing filter matches, e.g. \'{"tags":"case-7"}\'',
      ),
  ).action(
    async (
      options: RestFlags & {
        name: string;
        reason: string;
        kb?: string;
        document: string[];
        where?: string;
      },
    ) => {
      const hold = await answerOf(
        clientOf(endpointOf(options)).POST('/v1/holds', {
          body: {
            name: options.name,
            reason: options.reason,
            ...(options.kb ? { knowledgeBaseId: options.kb } : {}),
            ...(options.document.length > 0 ? { documentIds: options.document } : {}),
            ...(options.where
              ? { where: JSON.parse(options.where) as Record<string, unknown> }
              : {}),
          },
        }),
      );
      printResult(options, hold, () => holdsTable([hold]));
    },
  );

  restOptions(
    holds
      .command('list')
      .description("The tenant's holds, newest first.")
      .option('--state <state>', 'active, released or all', 'active'),
  ).action(async (options: RestFlags & { state: 'active' | 'released' | 'all' }) => {
    const { items } = await answerOf(
      clientOf(endpointOf(options)).GET('/v1/holds', {
        params: { query: { state: options.state } },
      }),
    );
    printResult(options, { items }, () => holdsTable(items));
  });

  restOptions(
    holds
      .command('show')
      .argument('<id>', 'hold id')
      .description('One hold, with the number of documents it holds now.'),
  ).action(async (id: string, options: RestFlags) => {
    const hold = await answerOf(
      clientOf(endpointOf(options)).GET('/v1/holds/{id}', { params: { path: { id } } }),
    );
    printResult(options, hold, () => holdsTable([hold]));
  });

  restOptions(
    holds
      .command('release')
      .argument('<id>', 'hold id')
      .description('Release a hold (final; it stays listed as released).')
      .option('--reason <text>', 'why', ''),
  ).action(async (id: string, options: RestFlags & { reason: string }) => {
    const hold = await answerOf(
      clientOf(endpointOf(options)).POST('/v1/holds/{id}/release', {
        params: { path: { id } },
        body: { reason: options.reason },
      }),
    );
    printResult(options, hold, () => holdsTable([hold]));
  });
}
