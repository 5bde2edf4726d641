import {
  type DocumentOperations,
  type DocumentPage,
  type DocumentServiceClient,
  documentServiceClient,
  type JsonBodyOf,
  type JsonOf,
  type KnowledgeBasePage,
  type KnowledgeBaseView,
} from '@kb/api-client';
import { Presets, SingleBar } from 'cli-progress';

import { answerOf } from '../client/rest-call';
import { formatTable } from './table';

/** Where the REST API is and who calls it. */
export interface RestEndpoint {
  documentsUrl: string;
  token: string;
}

export type KnowledgeBaseStats = JsonOf<DocumentOperations['getKnowledgeBaseStats']>;
export type KnowledgeBaseItem = JsonOf<DocumentOperations['listKnowledgeBases']>['items'][number];
export type DocumentItem = JsonOf<DocumentOperations['listDocuments']>['items'][number];
export type EmptyResult = JsonOf<DocumentOperations['emptyKnowledgeBase']>;
export type DeleteResult = JsonOf<DocumentOperations['deleteKnowledgeBase']>;

/** An answer that is not 2xx, with the API's stable code. */
export { ApiError } from '../client/rest-call';

const clientOf = (endpoint: RestEndpoint): DocumentServiceClient =>
  documentServiceClient({ baseUrl: endpoint.documentsUrl, token: endpoint.token });

export function createKnowledgeBase(
  endpoint: RestEndpoint,
  input: JsonBodyOf<DocumentOperations['createKnowledgeBase']>,
): Promise<KnowledgeBaseView> {
  return answerOf(clientOf(endpoint).POST('/v1/knowledge-bases', { body: input }));
}

/** Every knowledge base (matching `name`), a page at a time, with their stats. */
export async function listKnowledgeBases(
  endpoint: RestEndpoint,
  options: { name?: string } = {},
): Promise<{ items: KnowledgeBaseItem[]; total: number }> {
  const client = clientOf(endpoint);
  const items: KnowledgeBaseItem[] = [];
  let cursor: string | null = null;
  let total = 0;
  do {
    const page: KnowledgeBasePage = await answerOf(
      client.GET('/v1/knowledge-bases', {
        params: {
          query: {
            limit: 1000,
            ...(options.name ? { name: options.name } : {}),
            ...(cursor ? { cursor } : {}),
          },
        },
      }),
    );
    items.push(...page.items);
    total = page.total;
    cursor = page.nextCursor;
  } while (cursor);
  return { items, total };
}

export function knowledgeBaseStats(
  endpoint: RestEndpoint,
  id: string,
): Promise<KnowledgeBaseStats> {
  return answerOf(
    clientOf(endpoint).GET('/v1/knowledge-bases/{id}/stats', { params: { path: { id } } }),
  );
}

/**
 * Empties a knowledge base. The server runs it as one job; the bar shows the documents the
 * caller reads in it going, then the summary.
 */
export async function emptyKnowledgeBase(
  endpoint: RestEndpoint,
  id: string,
  progress: boolean,
): Promise<EmptyResult> {
  const before = await knowledgeBaseStats(endpoint, id);
  const bar = progress
    ? new SingleBar(
        { clearOnComplete: false, format: 'emptying [{bar}] {value}/{total}' },
        Presets.shades_classic,
      )
    : undefined;
  bar?.start(before.documentCount, 0);
  try {
    const result = await answerOf(
      clientOf(endpoint).DELETE('/v1/knowledge-bases/{id}/documents', {
        params: { path: { id } },
      }),
    );
    bar?.update(Math.min(result.deletedCount, before.documentCount));
    return result;
  } finally {
    bar?.stop();
  }
}

export function deleteKnowledgeBase(
  endpoint: RestEndpoint,
  id: string,
  cascade: boolean,
): Promise<DeleteResult> {
  return answerOf(
    clientOf(endpoint).DELETE('/v1/knowledge-bases/{id}', {
      params: { path: { id }, query: { cascade: cascade ? 'true' : 'false' } },
    }),
  );
}

/** Documents matching `where` (in one knowledge base), every page up to `max`, with a bar. */
export async function listDocuments(
  endpoint: RestEndpoint,
  options: { knowledgeBaseId?: string; where?: string; max: number; progress: boolean },
): Promise<DocumentItem[]> {
  const client = clientOf(endpoint);
  const items: DocumentItem[] = [];
  const bar = options.progress
    ? new SingleBar(
        { clearOnComplete: true, format: 'listing {value} documents' },
        Presets.shades_classic,
      )
    : undefined;
  bar?.start(options.max, 0);
  let cursor: string | null = null;
  try {
    do {
      const query: { limit: number; where?: string; cursor?: string } = {
        limit: Math.min(1000, options.max - items.length),
        ...(options.where ? { where: options.where } : {}),
        ...(cursor ? { cursor } : {}),
      };
      const page: DocumentPage = await answerOf(
        options.knowledgeBaseId
          ? client.GET('/v1/knowledge-bases/{id}/documents', {
              params: { path: { id: options.knowledgeBaseId }, query },
            })
          : client.GET('/v1/documents', { params: { query } }),
      );
      items.push(...page.items);
      bar?.update(items.length);
      cursor = page.nextCursor;
    } while (cursor && items.length < options.max);
  } finally {
    bar?.stop();
  }
  return items;
}

export const knowledgeBasesTable = (items: KnowledgeBaseItem[], total: number): string =>
  formatTable(
    ['id', 'name', 'status', 'documents', 'chunks', 'bytes', 'last indexed'],
    items.map((kb) => [
      kb.id,
      kb.name,
      kb.stats?.status ?? '',
      kb.stats?.documentCount ?? '',
      kb.stats?.chunkCount ?? '',
      kb.stats?.bytes ?? '',
      kb.stats?.lastIndexedAt ?? '-',
    ]),
  ) + `${items.length} of ${total} knowledge bases\n`;

export const statsTable = (id: string, stats: KnowledgeBaseStats): string =>
  formatTable(
    ['knowledge base', 'status', 'documents', 'chunks', 'bytes', 'last indexed'],
    [
      [
        id,
        stats.status,
        stats.documentCount,
        stats.chunkCount,
        stats.bytes,
        stats.lastIndexedAt ?? '-',
      ],
    ],
  ) +
  formatTable(
    ['document status', 'documents'],
    Object.entries(stats.documentsByStatus).map(([status, n]) => [status, n]),
  );

/** The closing summary of a long operation: one row per figure. */
export const summaryTable = (rows: Array<[string, string | number]>): string =>
  formatTable(['summary', 'value'], rows);

export const documentsTable = (items: DocumentItem[]): string =>
  formatTable(
    ['id', 'title', 'status', 'content type', 'tags', 'knowledge bases', 'created'],
    items.map((d) => [
      d.id,
      d.title,
      d.status,
      d.contentType,
      d.tags.join(','),
      d.knowledgeBaseIds.join(','),
      d.createdAt,
    ]),
  ) + `${items.length} documents\n`;
