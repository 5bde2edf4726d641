import { Presets, SingleBar } from 'cli-progress';

import { restCall } from '../client/rest-call';
import { formatTable } from './table';

/** Where the REST API is and who calls it. */
export interface RestEndpoint {
  documentsUrl: string;
  token: string;
}

export interface KnowledgeBaseStats {
  status: 'indexing' | 'active' | 'error';
  documentCount: number;
  documentsByStatus: Record<string, number>;
  chunkCount: number;
  bytes: number;
  lastIndexedAt: string | null;
}

export interface KnowledgeBaseItem {
  id: string;
  name: string;
  description: string;
  metadata: Record<string, unknown>;
  stats?: KnowledgeBaseStats;
}

export interface DocumentItem {
  id: string;
  title: string;
  status: string;
  contentType: string;
  tags: string[];
  knowledgeBaseIds: string[];
  createdAt: string;
}

/** An answer that is not 2xx, with the API's stable code. */
export { ApiError } from '../client/rest-call';

const call = <T>(endpoint: RestEndpoint, method: string, path: string, body?: unknown) =>
  restCall<T>(endpoint.documentsUrl, endpoint.token, method, path, body);

const kbPath = (id: string) => `/v1/knowledge-bases/${encodeURIComponent(id)}`;

export function createKnowledgeBase(
  endpoint: RestEndpoint,
  input: {
    id: string;
    name: string;
    description?: string;
    metadata?: Record<string, unknown>;
    embeddingModel?: string;
    tagRule?: { anyOf: string[] };
  },
): Promise<KnowledgeBaseItem> {
  return call(endpoint, 'POST', '/v1/knowledge-bases', input);
}

/** Every knowledge base (matching `name`), a page at a time, with their stats. */
export async function listKnowledgeBases(
  endpoint: RestEndpoint,
  options: { name?: string } = {},
): Promise<{ items: KnowledgeBaseItem[]; total: number }> {
  const items: KnowledgeBaseItem[] = [];
  let cursor: string | null = null;
  let total = 0;
  do {
    const query = new URLSearchParams({
      limit: '1000',
      ...(options.name ? { name: options.name } : {}),
      ...(cursor ? { cursor } : {}),
    });
    const page: { items: KnowledgeBaseItem[]; total: number; nextCursor: string | null } =
      await call(endpoint, 'GET', `/v1/knowledge-bases?${query.toString()}`);
    items.push(...page.items);
    total = page.total;
    cursor = page.nextCursor;
  } while (cursor);
  return { items, total };
}

export function knowledgeBaseStats(
  endpoint: RestEndpoint,
  id: string,
): Promise<KnowledgeBaseStats & { knowledgeBaseId: string }> {
  return call(endpoint, 'GET', `${kbPath(id)}/stats`);
}

export interface EmptyResult {
  jobId: string;
  knowledgeBaseId: string;
  deletedCount: number;
  unlinkedCount: number;
  retainedCount: number;
  tookMs: number;
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
    const result = await call<EmptyResult>(endpoint, 'DELETE', `${kbPath(id)}/documents`);
    bar?.update(Math.min(result.deletedCount, before.documentCount));
    return result;
  } finally {
    bar?.stop();
  }
}

export interface DeleteResult {
  id: string;
  cascade: boolean;
  deletedCount: number;
  unlinkedCount: number;
}

export function deleteKnowledgeBase(
  endpoint: RestEndpoint,
  id: string,
  cascade: boolean,
): Promise<DeleteResult> {
  return call(endpoint, 'DELETE', `${kbPath(id)}?cascade=${String(cascade)}`);
}

/** Documents matching `where` (in one knowledge base), every page up to `max`, with a bar. */
export async function listDocuments(
  endpoint: RestEndpoint,
  options: { knowledgeBaseId?: string; where?: string; max: number; progress: boolean },
): Promise<DocumentItem[]> {
  const items: DocumentItem[] = [];
  const path = options.knowledgeBaseId
    ? `${kbPath(options.knowledgeBaseId)}/documents`
    : '/v1/documents';
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
      const query = new URLSearchParams({
        limit: String(Math.min(1000, options.max - items.length)),
        ...(options.where ? { where: options.where } : {}),
        ...(cursor ? { cursor } : {}),
      });
      const page: { items: DocumentItem[]; nextCursor: string | null } = await call(
        endpoint,
        'GET',
        `${path}?${query.toString()}`,
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
