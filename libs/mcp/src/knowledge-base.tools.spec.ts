import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';

import {
  type ContextRequest,
  type CreateSourceRequest,
  KnowledgeBaseApiError,
  type KnowledgeBasePort,
  type SearchRequest,
} from './knowledge-base.port';
import { createKnowledgeBaseMcpServer } from './knowledge-base.tools';

const DOC = '3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60';
const HIDDEN = '00000000-0000-4000-8000-000000000000';

/** A port that records what the tools asked and refuses the hidden document as the APIs do. */
function fakePort() {
  const calls: {
    search: SearchRequest[];
    context: ContextRequest[];
    sources: CreateSourceRequest[];
    syncs: string[];
  } = { search: [], context: [], sources: [], syncs: [] };
  const SOURCE = '5a1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f61';
  const port: KnowledgeBasePort = {
    search: async (request) => (calls.search.push(request), { hits: [{ documentId: DOC }] }),
    context: async (request) => (
      calls.context.push(request),
      {
        passages: [
          {
            citation: 1,
            documentId: DOC,
            documentVersion: 2,
            title: 'Tides',
            startOffset: 5,
            endOffset: 40,
            text: 'The moon pulls the water.',
          },
        ],
      }
    ),
    getDocument: async (id) => {
      if (id === HIDDEN) {
        throw new KnowledgeBaseApiError(404, 'document_not_found', `document ${id} not found`);
      }
      return { id, title: 'Tides' };
    },
    getDocumentText: async (_id, window) => ({ offset: window.offset, text: 'The moon' }),
    listDocuments: async () => ({ items: [{ id: DOC, title: 'Tides' }], nextCursor: 'c2' }),
    listKnowledgeBases: async () => ({ items: [{ id: 'default' }] }),
    stats: async () => ({ totals: { documents: 1 } }),
    createSource: async (request) => (calls.sources.push(request), { id: SOURCE, ...request }),
    syncSource: async (id) => {
      if (id !== SOURCE) throw new KnowledgeBaseApiError(404, 'source_not_found', 'no source');
      calls.syncs.push(id);
      return { id: 'sync-1', sourceId: id, status: 'running' };
    },
    getSourceSync: async (id, syncId) => ({ id: syncId, sourceId: id, status: 'succeeded' }),
  };
  return { port, calls };
}

async function connect(port: KnowledgeBasePort) {
  const server = createKnowledgeBaseMcpServer(port, { version: 'test' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'spec', version: '1' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return client;
}

const textOf = (result: Awaited<ReturnType<Client['callTool']>>): string =>
  (result.content as Array<{ type: string; text: string }>)[0]!.text;

describe('the knowledge base MCP server', () => {
  it('lists six read-only tools and two for sources, each with a description and an input schema', async () => {
    const client = await connect(fakePort().port);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'kb_add_source',
      'kb_context',
      'kb_get_document',
      'kb_list_documents',
      'kb_list_knowledge_bases',
      'kb_search',
      'kb_stats',
      'kb_sync',
    ]);
    for (const tool of tools) {
      expect(tool.description?.length).toBeGreaterThan(20);
      expect(tool.inputSchema.type).toBe('object');
      const writes = tool.name === 'kb_add_source' || tool.name === 'kb_sync';
      expect(tool.annotations?.readOnlyHint).toBe(!writes);
    }
    const search = tools.find((t) => t.name === 'kb_search')!;
    expect(search.inputSchema.required).toEqual(['query']);
    expect(search.inputSchema.properties?.['limit']).toMatchObject({ maximum: 50 });
    expect(search.inputSchema.properties?.['mode']).toMatchObject({
      enum: ['auto', 'hybrid', 'semantic', 'lexical'],
    });
  });

  it('sends a search as the query API takes it, auto by default', async () => {
    const { port, calls } = fakePort();
    const client = await connect(port);
    const result = await client.callTool({
      name: 'kb_search',
      arguments: { query: 'tides', limit: 5, filter: { tags: 'sea' }, knowledge_base_ids: ['kb'] },
    });
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(textOf(result))).toEqual({ hits: [{ documentId: DOC }] });
    expect(calls.search).toEqual([
      {
        query: 'tides',
        topK: 5,
        offset: 0,
        mode: 'auto',
        knowledgeBaseIds: ['kb'],
        filter: { tags: 'sea' },
      },
    ]);
    await client.callTool({ name: 'kb_search', arguments: { query: 'x', mode: 'lexical' } });
    expect(calls.search[1]).toMatchObject({ mode: 'lexical', topK: 10 });
  });

  it('refuses a limit over 50 before the port is asked', async () => {
    const { port, calls } = fakePort();
    const client = await connect(port);
    const result = await client.callTool({
      name: 'kb_search',
      arguments: { query: 'x', limit: 51 },
    });
    expect(result.isError).toBe(true);
    expect(calls.search).toEqual([]);
  });

  it('numbers context passages for citation', async () => {
    const { port, calls } = fakePort();
    const client = await connect(port);
    const result = await client.callTool({
      name: 'kb_context',
      arguments: { question: 'what pulls the water?' },
    });
    expect(textOf(result)).toContain(`[1] Tides (document ${DOC} v2, characters 5-40)`);
    expect(textOf(result)).toContain('The moon pulls the water.');
    expect(calls.context[0]).toMatchObject({ tokenBudget: 2000, mode: 'auto' });
    // Without `rerank` the knowledge bases decide; with it, it is passed on.
    expect(calls.context[0]).not.toHaveProperty('rerank');
    await client.callTool({ name: 'kb_context', arguments: { question: 'q', rerank: true } });
    expect(calls.context[1]).toMatchObject({ rerank: true });
  });

  it('reads a document with a text window, and shows a refusal with its code', async () => {
    const client = await connect(fakePort().port);
    const read = await client.callTool({
      name: 'kb_get_document',
      arguments: { document_id: DOC, text_offset: 7 },
    });
    expect(JSON.parse(textOf(read))).toEqual({
      document: { id: DOC, title: 'Tides' },
      text: { offset: 7, text: 'The moon' },
    });
    const hidden = await client.callTool({
      name: 'kb_get_document',
      arguments: { document_id: HIDDEN },
    });
    expect(hidden.isError).toBe(true);
    expect(textOf(hidden)).toBe(`document_not_found: document ${HIDDEN} not found`);
  });

  it('pages documents with next_cursor and serves knowledge bases and documents as resources', async () => {
    const client = await connect(fakePort().port);
    const page = await client.callTool({ name: 'kb_list_documents', arguments: {} });
    expect(JSON.parse(textOf(page))).toEqual({
      items: [{ id: DOC, title: 'Tides' }],
      next_cursor: 'c2',
    });
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['kb://knowledge-bases', `kb://documents/${DOC}`]);
    const document = await client.readResource({ uri: `kb://documents/${DOC}` });
    expect(JSON.parse((document.contents[0] as { text: string }).text)).toMatchObject({
      document: { id: DOC },
      text: { offset: 0 },
    });
  });

  it('never describes an internal failure to the model', async () => {
    const { port } = fakePort();
    const client = await connect({
      ...port,
      stats: async () => Promise.reject(new Error('pg down at 10.0.0.5')),
    });
    const result = await client.callTool({ name: 'kb_stats', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('internal_error: the tool failed');
  });

  it('adds an S3 source with its schedule, starts its sync and reads its progress', async () => {
    const { port, calls } = fakePort();
    const client = await connect(port);
    const added = await client.callTool({
      name: 'kb_add_source',
      arguments: {
        name: 'handbook',
        knowledge_base_id: 'default',
        bucket: 'team-docs',
        prefix: 'handbook/',
        schedule: '0 3 * * *',
        timezone: 'Europe/Paris',
      },
    });
    expect(added.isError).toBeFalsy();
    expect(calls.sources).toEqual([
      {
        name: 'handbook',
        knowledgeBaseId: 'default',
        kind: 's3',
        bucket: 'team-docs',
        prefix: 'handbook/',
        schedule: '0 3 * * *',
        timezone: 'Europe/Paris',
      },
    ]);
    const { id } = JSON.parse(textOf(added)) as { id: string };
    const started = await client.callTool({ name: 'kb_sync', arguments: { source_id: id } });
    expect(JSON.parse(textOf(started))).toMatchObject({ id: 'sync-1', status: 'running' });
    const progress = await client.callTool({
      name: 'kb_sync',
      arguments: { source_id: id, sync_id: '6b1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f62' },
    });
    expect(JSON.parse(textOf(progress))).toMatchObject({ status: 'succeeded' });
    expect(calls.syncs).toEqual([id]);
    const refused = await client.callTool({
      name: 'kb_sync',
      arguments: { source_id: HIDDEN },
    });
    expect(refused).toMatchObject({ isError: true });
    expect(textOf(refused)).toMatch(/^source_not_found: /);
  });
});
