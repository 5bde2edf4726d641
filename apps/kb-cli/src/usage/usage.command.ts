import { type DocumentOperations, documentServiceClient, type JsonOf } from '@kb/api-client';
import { type Command, InvalidArgumentError } from 'commander';

import { answerOf } from '../client/rest-call';
import { endpointOf, printResult, type RestFlags, restOptions } from '../client/rest-options';
import type { RestEndpoint } from '../collections/collections.command';
import { formatTable } from '../collections/table';

type Usage = JsonOf<DocumentOperations['getUsage']>;
type Quotas = JsonOf<DocumentOperations['getQuotas']>;
type Limits = Quotas['tenant'];

const clientOf = (endpoint: RestEndpoint) =>
  documentServiceClient({ baseUrl: endpoint.documentsUrl, token: endpoint.token });

/** A limit: a whole number, or `none` to remove the tenant's own. */
export function parseLimit(value: string): number | null {
  if (value === 'none') return null;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 0) {
    throw new InvalidArgumentError(`"${value}" is not a whole number or "none"`);
  }
  return limit;
}

export const usageTable = (usage: Usage): string =>
  [
    formatTable(
      ['stored', 'documents', 'bytes', 'chunks', 'knowledge bases'],
      [
        [
          'tenant',
          usage.stored.documents,
          usage.stored.bytes,
          usage.stored.chunks,
          usage.stored.knowledgeBases,
        ],
        ...usage.knowledgeBases.map((kb) => [kb.id, kb.documents, kb.bytes, kb.chunks, '']),
      ].map((row) => row.map(String)),
    ),
    formatTable(
      ['day', 'searches', 'context calls', 'reranks', 'uploads'],
      [
        ...usage.days.map((d) => [d.day, d.searches, d.contextCalls, d.reranks, d.uploads]),
        [
          `${usage.from}..${usage.to}`,
          usage.totals.searches,
          usage.totals.contextCalls,
          usage.totals.reranks,
          usage.totals.uploads,
        ],
      ].map((row) => row.map(String)),
    ),
  ].join('\n');

const limitCells = (limits: Omit<Limits, never>) =>
  [limits.maxDocuments, limits.maxBytes, limits.maxKnowledgeBases, limits.maxSearchesPerDay].map(
    (v) => (v === null ? '-' : String(v)),
  );

export const quotasTable = (quotas: Quotas): string =>
  formatTable(
    ['scope', 'documents', 'bytes', 'knowledge bases', 'searches/day'],
    [
      ['tenant', ...limitCells(quotas.tenant)],
      ...quotas.knowledgeBases.map((kb) => [kb.id, ...limitCells(kb)]),
    ],
  );

/** `kb usage` and `kb quotas` (docs/adr/0053). */
export function registerUsageCommands(program: Command): void {
  restOptions(
    program
      .command('usage')
      .description(
        'What the tenant stores and what it did each UTC day (tenant admins); the last 30 days by default.',
      )
      .option('--from <day>', 'first day, YYYY-MM-DD')
      .option('--to <day>', 'last day, YYYY-MM-DD (default today)')
      .option('--kb <id>', "one knowledge base's days"),
  ).action(async (options: RestFlags & { from?: string; to?: string; kb?: string }) => {
    const usage = await answerOf(
      clientOf(endpointOf(options)).GET('/v1/usage', {
        params: {
          query: {
            ...(options.from ? { from: options.from } : {}),
            ...(options.to ? { to: options.to } : {}),
            ...(options.kb ? { knowledgeBaseId: options.kb } : {}),
          },
        },
      }),
    );
    printResult(options, usage, () => usageTable(usage));
  });

  restOptions(
    program
      .command('quotas')
      .description(
        'The limits in force; with a --max-* option, set the tenant\u2019s (or --kb\u2019s) limit (tenant admins; never looser than the deployment\u2019s).',
      )
      .option('--kb <id>', 'a knowledge base\u2019s limits')
      .option('--max-documents <n|none>', 'documents', parseLimit)
      .option('--max-bytes <n|none>', 'stored bytes of originals', parseLimit)
      .option('--max-knowledge-bases <n|none>', 'knowledge bases (tenant only)', parseLimit)
      .option(
        '--max-searches-per-day <n|none>',
        'searches and context calls per UTC day',
        parseLimit,
      ),
  ).action(
    async (
      options: RestFlags & {
        kb?: string;
        maxDocuments?: number | null;
        maxBytes?: number | null;
        maxKnowledgeBases?: number | null;
        maxSearchesPerDay?: number | null;
      },
    ) => {
      const client = clientOf(endpointOf(options));
      const limits = {
        ...(options.maxDocuments !== undefined ? { maxDocuments: options.maxDocuments } : {}),
        ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
        ...(options.maxKnowledgeBases !== undefined
          ? { maxKnowledgeBases: options.maxKnowledgeBases }
          : {}),
        ...(options.maxSearchesPerDay !== undefined
          ? { maxSearchesPerDay: options.maxSearchesPerDay }
          : {}),
      };
      const quotas =
        Object.keys(limits).length === 0
          ? await answerOf(client.GET('/v1/quotas'))
          : await answerOf(
              client.PUT('/v1/quotas', {
                body: { ...limits, ...(options.kb ? { knowledgeBaseId: options.kb } : {}) },
              }),
            );
      printResult(options, quotas, () => quotasTable(quotas));
    },
  );
}
