import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { createServer, type Server } from 'node:net';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';

import { KnowledgeBaseApiError } from './knowledge-base.port';
import { createKnowledgeBaseMcpServer } from './knowledge-base.tools';
import { KnowledgeBaseRestClient, UNREACHABLE_MESSAGE } from './knowledge-base-rest.client';

const DOC = '3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60';

/** A port nobody listens on: a server that was started and closed again. */
async function closedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('KnowledgeBaseRestClient, an unreachable API (L6)', () => {
  let documentsUrl: string;
  beforeAll(async () => {
    documentsUrl = `http://127.0.0.1:${await closedPort()}`;
  });

  it('refuses with 503 unavailable and a generic message; the detail goes to the log only', async () => {
    const logged: string[] = [];
    const client = new KnowledgeBaseRestClient({
      documentsUrl,
      token: 't',
      logFailure: (detail) => logged.push(detail),
    });
    const refusal = await client.getDocument(DOC).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(KnowledgeBaseApiError);
    expect(refusal).toMatchObject({
      status: 503,
      code: 'unavailable',
      message: UNREACHABLE_MESSAGE,
    });
    const { message } = refusal as Error;
    expect(message).not.toContain('127.0.0.1');
    expect(message).not.toMatch(/fetch failed|ECONNREFUSED|http:/i);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain(documentsUrl);
    expect(logged[0]).toMatch(/ECONNREFUSED|fetch failed/);
  });

  it('an MCP tool shows the model the stable code and the generic message only', async () => {
    const server = createKnowledgeBaseMcpServer(
      new KnowledgeBaseRestClient({ documentsUrl, token: 't', logFailure: () => undefined }),
      { version: 'test' },
    );
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const mcp = new Client({ name: 'spec', version: '1' });
    await Promise.all([server.connect(serverSide), mcp.connect(clientSide)]);
    const result = await mcp.callTool({ name: 'kb_get_document', arguments: { document_id: DOC } });
    const text = JSON.stringify(result.content);
    expect(result.isError).toBe(true);
    expect(text).toContain(`unavailable: ${UNREACHABLE_MESSAGE}`);
    expect(text).not.toContain('127.0.0.1');
    expect(text).not.toMatch(/fetch failed|ECONNREFUSED/i);
    await mcp.close();
  });
});

describe('KnowledgeBaseRestClient, through the generated clients', () => {
  const asked: Array<{ method?: string; url?: string; authorization?: string; body: string }> = [];
  const api = createHttpServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (part: Buffer) => (body += part.toString()));
    request.on('end', () => {
      asked.push({
        method: request.method,
        url: request.url,
        authorization: request.headers.authorization,
        body,
      });
      response.writeHead(request.url?.startsWith('/v1/documents/') ? 404 : 200, {
        'content-type': 'application/json',
      });
      response.end(
        JSON.stringify(
          request.url?.startsWith('/v1/documents/')
            ? { error: { code: 'not_found', message: 'no such document' } }
            : { hits: [], tookMs: 1 },
        ),
      );
    });
  });
  let client: KnowledgeBaseRestClient;
  beforeAll(async () => {
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(api.address() as { port: number }).port}`;
    client = new KnowledgeBaseRestClient({ documentsUrl: url, queryUrl: url, token: 'tok' });
  });
  afterAll(() => new Promise<void>((resolve) => api.close(() => resolve())));

  it("posts a search as JSON with the caller's token", async () => {
    const request = {
      query: 'saturn',
      topK: 5,
      offset: 0,
      mode: 'hybrid' as const,
      knowledgeBaseIds: ['kb-a'],
    };
    await expect(client.search(request)).resolves.toEqual({ hits: [], tookMs: 1 });
    expect(asked.at(-1)).toEqual({
      method: 'POST',
      url: '/v1/search',
      authorization: 'Bearer tok',
      body: JSON.stringify(request),
    });
  });

  it("reads a text window with its query, and keeps a refusal's status and code", async () => {
    const refusal = await client
      .getDocumentText(DOC, { offset: 10, limit: 20, version: 2 })
      .catch((error: unknown) => error);
    expect(asked.at(-1)).toMatchObject({
      method: 'GET',
      url: `/v1/documents/${DOC}/text?offset=10&limit=20&version=2`,
    });
    expect(refusal).toBeInstanceOf(KnowledgeBaseApiError);
    expect(refusal).toMatchObject({ status: 404, code: 'not_found', message: 'no such document' });
  });
});
