/**
 * What agents use, end to end through the public APIs: a document's original (ranges included)
 * and extracted text over REST and gRPC, and the MCP server through the SDK's own client over
 * both transports (Streamable HTTP on query-service, stdio through `kb mcp`), ACLs included: a
 * reader's tools never show what the reader cannot read.
 */
import { resolve } from 'node:path';

import { status } from '@grpc/grpc-js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { grpcGetDocument, grpcGetDocumentContent, kbClient } from '../support/grpc-client';
import { MISSIONS_DOCUMENT, testToken, useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(300_000);

const SHARED_DOCUMENT = [
  '# Lighthouse keeping',
  '',
  '## Lamps',
  'Keepers trimmed the wicks of the zqlamp lanterns every night and polished the lenses at dawn.',
].join('\n');

type ToolResult = Awaited<ReturnType<Client['callTool']>>;
const textOf = (result: ToolResult): string =>
  (result.content as Array<{ type: string; text: string }>)[0]!.text;
const jsonOf = <T>(result: ToolResult): T => JSON.parse(textOf(result)) as T;
interface Hits {
  hits: Array<{ documentId: string; text: string }>;
}
interface Stats {
  scope: string;
  totals: { documents: number; byStatus: { indexed: { documents: number } } };
}

describe('agents: document content and the MCP server', () => {
  const suite = useSuite('agents', 5000);
  const grpcAddress = () => `127.0.0.1:${suite.ports['query-service']!.grpcPort}`;
  let privateId = '';
  let sharedId = '';
  let readerToken = '';

  beforeAll(async () => {
    // A knowledge base of the tenant: listed to every member, whatever they may read in it.
    const created = await fetch(`${suite.documentUrl}/v1/knowledge-bases`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(await suite.auth({ user: 'root', roles: ['admin'] })),
      },
      body: JSON.stringify({ id: 'handbook', name: 'Handbook' }),
    });
    expect(created.status).toBe(201);
    const uploaded = [];
    const uploads: Array<[string, string, { acl?: object; knowledgeBaseIds?: string[] }]> = [
      ['missions.md', MISSIONS_DOCUMENT, {}],
      [
        'lighthouses.md',
        SHARED_DOCUMENT,
        { acl: { users: ['reader'] }, knowledgeBaseIds: ['handbook'] },
      ],
    ];
    for (const [name, body, fields] of uploads) {
      const response = await suite.upload(name, body, 'text/markdown', suite.tenant, fields);
      expect(response.status).toBe(202);
      uploaded.push(((await response.json()) as { id: string }).id);
    }
    [privateId, sharedId] = uploaded as [string, string];
    for (const id of uploaded) {
      await waitFor(
        () => suite.getDocument(id),
        (d) => d.status === 'indexed',
        120_000,
      );
    }
    readerToken = await testToken({ tenant: suite.tenant, user: 'reader', roles: [] });
  });

  const get = async (path: string, headers: Record<string, string> = {}, token = suite.token) =>
    fetch(`${suite.documentUrl}${path}`, {
      headers: { authorization: `Bearer ${token}`, ...headers },
    });

  it('serves the original with its type, entity tag and byte ranges, and 404 to a non-reader', async () => {
    const whole = await get(`/v1/documents/${privateId}/content`);
    expect(whole.status).toBe(200);
    expect(await whole.text()).toBe(MISSIONS_DOCUMENT);
    const { sha256 } = await suite.getDocument(privateId);
    expect(whole.headers.get('etag')).toBe(`"${String(sha256)}"`);
    expect(whole.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(whole.headers.get('content-length')).toBe(String(Buffer.byteLength(MISSIONS_DOCUMENT)));
    const size = Buffer.byteLength(MISSIONS_DOCUMENT);
    const range = await get(`/v1/documents/${privateId}/content`, { range: 'bytes=2-31' });
    expect(range.status).toBe(206);
    expect(range.headers.get('content-range')).toBe(`bytes 2-31/${size}`);
    expect(await range.text()).toBe(Buffer.from(MISSIONS_DOCUMENT).subarray(2, 32).toString());
    const beyond = await get(`/v1/documents/${privateId}/content`, { range: `bytes=${size}-` });
    expect(beyond.status).toBe(416);
    const hidden = await get(`/v1/documents/${privateId}/content`, {}, readerToken);
    expect(hidden.status).toBe(404);
    expect(await hidden.json()).toMatchObject({ error: { code: 'document_not_found' } });
  });

  it('serves the extracted text that search offsets point into, with its heading map', async () => {
    const text = (await (await get(`/v1/documents/${privateId}/text?limit=100000`)).json()) as {
      text: string;
      length: number;
      nextOffset: number | null;
      headings: Array<{ level: number; text: string; start: number }>;
    };
    expect(text).toMatchObject({ length: MISSIONS_DOCUMENT.length, nextOffset: null });
    expect(text.headings.map((h) => h.text)).toEqual([
      'Field notes on interplanetary missions',
      'Transfers',
      'Aerobraking',
      'Communications',
    ]);
    const { hits } = (await (
      await fetch(`${suite.queryUrl}/v1/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${suite.token}` },
        body: JSON.stringify({ query: 'Hohmann transfer', mode: 'lexical', topK: 3 }),
      })
    ).json()) as {
      hits: Array<{ documentId: string; text: string; startOffset: number; endOffset: number }>;
    };
    const hit = hits.find((h) => h.documentId === privateId)!;
    expect(text.text.slice(hit.startOffset, hit.endOffset)).toBe(hit.text);
    const page = (await (
      await get(`/v1/documents/${privateId}/text?offset=10&limit=20`)
    ).json()) as {
      text: string;
      nextOffset: number;
    };
    expect(page).toMatchObject({ text: MISSIONS_DOCUMENT.slice(10, 30), nextOffset: 30 });
    expect((await get(`/v1/documents/${privateId}/text`, {}, readerToken)).status).toBe(404);
  });

  it('answers GetDocument with include_text and streams GetDocumentContent over gRPC', async () => {
    const client = kbClient(grpcAddress());
    try {
      const { document, text } = await grpcGetDocument(client, suite.token, privateId, {
        includeText: true,
        textLimit: 40,
      });
      expect(document?.id).toBe(privateId);
      expect(text).toMatchObject({
        offset: 0,
        text: MISSIONS_DOCUMENT.slice(0, 40),
        nextOffset: 40,
      });
      const messages = await grpcGetDocumentContent(client, suite.token, privateId);
      expect(Buffer.concat(messages.map((m) => m.data)).toString()).toBe(MISSIONS_DOCUMENT);
      expect(messages[0]).toMatchObject({ filename: 'missions.md', sha256: document?.sha256 });
      await expect(grpcGetDocumentContent(client, readerToken, privateId)).rejects.toMatchObject({
        code: status.NOT_FOUND,
      });
    } finally {
      client.close();
    }
  });

  /** The same checks over either transport: the editor sees both documents, the reader one. */
  async function checkTools(connect: (token: string) => Promise<Client>): Promise<void> {
    const editor = await connect(suite.token);
    const reader = await connect(readerToken);
    try {
      const { tools } = await reader.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(
        [
          'kb_add_source',
          'kb_context',
          'kb_get_document',
          'kb_list_documents',
          'kb_list_knowledge_bases',
          'kb_stats',
          'kb_search',
          'kb_sync',
        ].sort(),
      );

      const search = {
        name: 'kb_search',
        arguments: { query: 'Hohmann transfer orbits', limit: 10 },
      };
      const editorHits = jsonOf<Hits>(await editor.callTool(search)).hits;
      expect(editorHits.some((h) => h.documentId === privateId)).toBe(true);
      const readerHits = jsonOf<Hits>(await reader.callTool(search)).hits;
      expect(readerHits.some((h) => h.documentId === privateId)).toBe(false);
      const lamps = jsonOf<Hits>(
        await reader.callTool({
          name: 'kb_search',
          arguments: { query: 'zqlamp', mode: 'lexical' },
        }),
      ).hits;
      expect(lamps.map((h) => h.documentId)).toContain(sharedId);

      const context = textOf(
        await reader.callTool({
          name: 'kb_context',
          arguments: { question: 'What is a Hohmann transfer?' },
        }),
      );
      expect(context).not.toContain(privateId);
      expect(
        textOf(
          await editor.callTool({
            name: 'kb_context',
            arguments: { question: 'What is a Hohmann transfer?' },
          }),
        ),
      ).toContain(privateId);

      const read = jsonOf<{ document: { id: string }; text: { text: string } }>(
        await editor.callTool({ name: 'kb_get_document', arguments: { document_id: privateId } }),
      );
      expect(read.text.text).toBe(MISSIONS_DOCUMENT);
      const hidden = await reader.callTool({
        name: 'kb_get_document',
        arguments: { document_id: privateId },
      });
      expect(hidden.isError).toBe(true);
      expect(textOf(hidden)).toMatch(/^document_not_found: /);

      const listed = jsonOf<{ items: Array<{ id: string }> }>(
        await reader.callTool({ name: 'kb_list_documents', arguments: {} }),
      );
      expect(listed.items.map((d) => d.id)).toEqual([sharedId]);
      const bases = jsonOf<{ items: Array<{ id: string }> }>(
        await reader.callTool({ name: 'kb_list_knowledge_bases', arguments: {} }),
      );
      expect(bases.items.map((kb) => kb.id)).toEqual(['handbook']);

      const readerStats = jsonOf<Stats>(await reader.callTool({ name: 'kb_stats', arguments: {} }));
      expect(readerStats).toMatchObject({
        scope: 'readable',
        totals: { documents: 1 },
        knowledgeBases: [{ id: 'handbook', documents: 1 }],
      });
      const editorStats = jsonOf<Stats>(await editor.callTool({ name: 'kb_stats', arguments: {} }));
      expect(editorStats.totals.documents).toBe(2);
      expect(editorStats.totals.byStatus.indexed.documents).toBe(2);

      const { resources } = await reader.listResources();
      expect(resources.map((r) => r.uri)).toEqual([
        'kb://knowledge-bases',
        `kb://documents/${sharedId}`,
      ]);
    } finally {
      await editor.close();
      await reader.close();
    }
  }

  it('serves the tools over Streamable HTTP with the caller’s token and ACLs', async () => {
    const unauthenticated = await fetch(`${suite.queryUrl}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(unauthenticated.status).toBe(401);
    await checkTools(async (token) => {
      const client = new Client({ name: 'e2e-http', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${suite.queryUrl}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      return client;
    });
  });

  it('serves the same tools over stdio through kb mcp', async () => {
    await checkTools(async (token) => {
      const client = new Client({ name: 'e2e-stdio', version: '1' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [resolve(__dirname, '../../apps/kb-cli/dist/main.js'), 'mcp'],
          env: {
            PATH: process.env['PATH'] ?? '',
            KB_TOKEN: token,
            KB_DOCUMENTS_URL: suite.documentUrl,
            KB_QUERY_URL: suite.queryUrl,
          },
          stderr: 'inherit',
        }),
      );
      return client;
    });
  });
});
