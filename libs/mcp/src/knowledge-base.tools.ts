import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

import type { KnowledgeBasePort } from './knowledge-base.port';
import { registerSourceTools } from './source.tools';
import { failure, run } from './tool-results';

export const MAX_SEARCH_LIMIT = 50;
export const MAX_TEXT_WINDOW = 50_000;

const knowledgeBaseIds = z
  .array(z.string().min(1).max(128))
  .max(50)
  .optional()
  .describe('Only these knowledge bases (ids from kb_list_knowledge_bases); omit for all.');
const filter = z
  .record(z.string(), z.unknown())
  .optional()
  .describe(
    'Mongo-style filter on document_id, tags, uploaded_at (epoch ms) and metadata.<key>, with ' +
      '$eq $ne $in $nin $gt $gte $lt $lte $exists $and $or. Example: {"tags": "finance", ' +
      '"metadata.year": {"$gte": 2024}}.',
  );
const mode = z
  .enum(['auto', 'hybrid', 'semantic', 'lexical'])
  .default('auto')
  .describe(
    'auto (default) picks the blend from the query: quoted phrases, identifiers and error ' +
      'strings lean on keywords, questions on meaning. hybrid fuses both evenly; semantic finds ' +
      'paraphrases; lexical matches exact words, identifiers and error strings.',
  );

/** A field of an API's JSON answer. */
const fieldOf = (value: object, key: string): unknown => (value as Record<string, unknown>)[key];
const listOf = (value: object, key: string): Array<Record<string, unknown>> => {
  const list = fieldOf(value, key);
  return Array.isArray(list) ? (list as Array<Record<string, unknown>>) : [];
};

/** Passages as a model reads them best: numbered, titled, with where each comes from. */
function contextText(answer: object): string {
  const passages = listOf(answer, 'passages');
  if (!passages.length) return 'No passage in the knowledge base answers this question.';
  const blocks = passages.map(
    (p) =>
      `[${String(p['citation'])}] ${String(p['title'])} (document ${String(p['documentId'])} ` +
      `v${String(p['documentVersion'])}, characters ${String(p['startOffset'])}-${String(p['endOffset'])})\n` +
      String(p['text']),
  );
  return `${blocks.join('\n\n')}\n\nCite passages as [n]. Read more of a document with kb_get_document.`;
}

const resourceJson = (uri: URL, value: unknown): ReadResourceResult => ({
  contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(value) }],
});

/**
 * The knowledge base as an MCP server: six read-only tools, two for sources (source.tools.ts), and resources for knowledge bases and
 * documents, over `port` (one caller: everything answers what that caller may read). Stateless:
 * build one per connection or request.
 */
export function createKnowledgeBaseMcpServer(
  port: KnowledgeBasePort,
  info: { name?: string; version: string },
): McpServer {
  const server = new McpServer(
    { name: info.name ?? 'knowledge-base', version: info.version },
    {
      instructions:
        'A searchable knowledge base of documents. Use kb_search or kb_context to find ' +
        'passages, kb_get_document to read a document, and cite document ids.',
    },
  );
  const readOnly = { readOnlyHint: true, openWorldHint: false } as const;

  server.registerTool(
    'kb_search',
    {
      title: 'Search the knowledge base',
      description:
        'Find the passages (chunks) that best match a query. Returns hits with document id, ' +
        'version, title, text, character offsets into the document text, score and the ' +
        'strategies that found it, plus next_offset for the next page.',
      inputSchema: {
        query: z.string().trim().min(1).max(4000).describe('What to look for.'),
        mode,
        limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).default(10).describe('Hits, 1-50.'),
        offset: z.number().int().min(0).max(150).default(0).describe('Hits to skip (paging).'),
        filter,
        knowledge_base_ids: knowledgeBaseIds,
      },
      annotations: readOnly,
    },
    (args) =>
      run(() =>
        port.search({
          query: args.query,
          topK: args.limit,
          offset: args.offset,
          mode: args.mode,
          knowledgeBaseIds: args.knowledge_base_ids ?? [],
          ...(args.filter ? { filter: args.filter } : {}),
        }),
      ),
  );

  server.registerTool(
    'kb_context',
    {
      title: 'Context for a question',
      description:
        'Retrieve passages that answer a question, merged and packed into a token budget, each ' +
        'numbered [n] with its document id, title and character range. Use it to ground an answer.',
      inputSchema: {
        question: z.string().trim().min(1).max(4000).describe('The question to answer.'),
        token_budget: z
          .number()
          .int()
          .min(64)
          .max(32_000)
          .default(2000)
          .describe('Upper bound on the passages, in tokens.'),
        mode,
        filter,
        knowledge_base_ids: knowledgeBaseIds,
        rerank: z
          .boolean()
          .optional()
          .describe(
            'Rerank the candidates with the cross-encoder (slower, sometimes better); absent: the knowledge bases decide.',
          ),
      },
      annotations: readOnly,
    },
    async (args) => {
      try {
        const answer = await port.context({
          question: args.question,
          tokenBudget: args.token_budget,
          mode: args.mode,
          knowledgeBaseIds: args.knowledge_base_ids ?? [],
          ...(args.filter ? { filter: args.filter } : {}),
          ...(args.rerank === undefined ? {} : { rerank: args.rerank }),
        });
        return { content: [{ type: 'text', text: contextText(answer) }] };
      } catch (error) {
        return failure(error);
      }
    },
  );

  server.registerTool(
    'kb_get_document',
    {
      title: 'Read a document',
      description:
        "A document's metadata (title, type, tags, metadata, status, knowledge bases) and a window " +
        'of its extracted text with its page and heading maps. Offsets are those of search hits; ' +
        'page through long documents with text_offset = next_offset.',
      inputSchema: {
        document_id: z.uuid().describe('The document id, e.g. from a search hit.'),
        include_text: z.boolean().default(true).describe('Also return extracted text.'),
        text_offset: z.number().int().min(0).default(0).describe('First character to return.'),
        text_limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_TEXT_WINDOW)
          .default(10_000)
          .describe('Characters to return, at most 50000.'),
        version: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe("A hit's document_version; default the current one."),
      },
      annotations: readOnly,
    },
    (args) =>
      run(async () => {
        const document = await port.getDocument(args.document_id);
        if (!args.include_text) return { document };
        const text = await port.getDocumentText(args.document_id, {
          offset: args.text_offset,
          limit: args.text_limit,
          ...(args.version !== undefined ? { version: args.version } : {}),
        });
        return { document, text };
      }),
  );

  server.registerTool(
    'kb_list_documents',
    {
      title: 'List documents',
      description:
        'The documents you may read, newest first, optionally in one knowledge base; pass ' +
        'next_cursor back as cursor for the next page.',
      inputSchema: {
        knowledge_base_id: z.string().min(1).max(128).optional().describe('Only this one.'),
        limit: z.number().int().min(1).max(100).default(20).describe('Documents per page.'),
        cursor: z.string().max(512).optional().describe('next_cursor of the previous page.'),
      },
      annotations: readOnly,
    },
    (args) =>
      run(async () => {
        const page = await port.listDocuments({
          limit: args.limit,
          ...(args.cursor ? { cursor: args.cursor } : {}),
          ...(args.knowledge_base_id ? { knowledgeBaseId: args.knowledge_base_id } : {}),
        });
        return { items: listOf(page, 'items'), next_cursor: fieldOf(page, 'nextCursor') ?? null };
      }),
  );

  server.registerTool(
    'kb_list_knowledge_bases',
    {
      title: 'List knowledge bases',
      description: 'The knowledge bases of your tenant: id, name, description, chunker and model.',
      inputSchema: {},
      annotations: readOnly,
    },
    () => run(() => port.listKnowledgeBases()),
  );

  server.registerTool(
    'kb_stats',
    {
      title: 'Knowledge base statistics',
      description:
        'Documents and chunks by status (pending, parsing, embedding, indexing, indexed, ' +
        'failed), in total and per knowledge base. Counts only documents you may read.',
      inputSchema: {},
      annotations: readOnly,
    },
    () => run(() => port.stats()),
  );

  server.registerResource(
    'knowledge-bases',
    'kb://knowledge-bases',
    { title: 'Knowledge bases', mimeType: 'application/json' },
    async (uri) => resourceJson(uri, await port.listKnowledgeBases()),
  );

  server.registerResource(
    'document',
    new ResourceTemplate('kb://documents/{id}', {
      // The newest readable documents; older ones are reached by id or kb_list_documents.
      list: async () => {
        const page = await port.listDocuments({ limit: 100 });
        return {
          resources: listOf(page, 'items').map((d) => ({
            uri: `kb://documents/${String(d['id'])}`,
            name: String(d['title']),
            mimeType: 'application/json',
          })),
        };
      },
    }),
    {
      title: 'Document',
      description: 'Metadata and the first 20000 characters of extracted text.',
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const id = String(variables['id']);
      const document = await port.getDocument(id);
      const text = await port
        .getDocumentText(id, { offset: 0, limit: 20_000 })
        .catch((error: unknown) => ({ unavailable: failure(error).content }));
      return resourceJson(uri, { document, text });
    },
  );

  registerSourceTools(server, port);
  return server;
}
