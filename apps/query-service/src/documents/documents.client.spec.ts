import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Caller } from '@kb/auth';
import { ErrorKind } from '@kb/errors';

import type { QueryConfig } from '../config/query.config';
import { DocumentsClient } from './documents.client';

const caller = { tenantId: 't1', userId: 'alice', token: 'a-token' } as unknown as Caller;

/** document-service's refusals reach gRPC and MCP callers as they were given. */
describe('DocumentsClient refusals', () => {
  let server: Server;
  let client: DocumentsClient;
  const asked: Array<{ url?: string; authorization?: string }> = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      asked.push({ url: request.url, authorization: request.headers.authorization });
      if (request.url?.startsWith('/v1/knowledge-bases/kb%201/documents')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ items: [], nextCursor: null }));
        return;
      }
      if (request.url?.includes('/text')) {
        response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '17' });
        response.end(
          JSON.stringify({
            error: { code: 'rate_limited', message: 'too many read calls from this caller' },
          }),
        );
        return;
      }
      response.writeHead(502);
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    client = new DocumentsClient({
      DOCUMENT_SERVICE_URL: `http://127.0.0.1:${port}`,
    } as unknown as QueryConfig);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('relays a spent read budget (429) as rate_limited with its delay, not as unavailable', async () => {
    await expect(
      client.text(caller, '6f1c1b7e-3f6a-4d1e-9a39-2b1f1c1d2e3f', { offset: 0, limit: 10 }),
    ).rejects.toMatchObject({
      code: 'rate_limited',
      kind: ErrorKind.ResourceExhausted,
      message: 'too many read calls from this caller',
      retryAfterSeconds: 17,
    });
  });

  it("lists through the generated client: the path, the query and the caller's token", async () => {
    await expect(client.list(caller, 5, 'c1', { knowledgeBaseId: 'kb 1' })).resolves.toEqual({
      items: [],
      nextCursor: null,
    });
    expect(asked.at(-1)).toEqual({
      url: '/v1/knowledge-bases/kb%201/documents?limit=5&cursor=c1',
      authorization: 'Bearer a-token',
    });
  });

  it('still answers unavailable for any other failure of document-service', async () => {
    await expect(client.get(caller, 'x')).rejects.toMatchObject({
      code: 'unavailable',
      kind: ErrorKind.Unavailable,
    });
  });
});
