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
