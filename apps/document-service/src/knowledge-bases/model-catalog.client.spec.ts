import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { KnowledgeBaseErrorCode } from './knowledge-bases.errors';
import { EmbeddingServiceCatalog } from './model-catalog.client';

/**
 * A stand-in embedding-service that serves its internal catalog only where the real one does
 * (`GET /v1/internal/models`, no token); `/v1/models` is the OpenAI-compatible list there, which
 * wants a token and has another shape.
 */
describe('EmbeddingServiceCatalog', () => {
  let server: Server;
  let url: string;
  let status = 200;

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/v1/internal/models' && !request.headers.authorization) {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ items: [{ model: 'all-MiniLM-L6-v2', dimension: 384 }] }));
        return;
      }
      response.writeHead(401).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  afterEach(() => (status = 200));

  const catalog = () => new EmbeddingServiceCatalog({ EMBEDDING_SERVICE_URL: url });

  it('reads the dimension of a served model from the internal catalog', async () => {
    await expect(catalog().dimensionOf('all-MiniLM-L6-v2')).resolves.toBe(384);
  });

  it('answers undefined for a model that is not served', async () => {
    await expect(catalog().dimensionOf('text-embedding-3-small')).resolves.toBeUndefined();
  });

  it('reports embedding-service as unavailable when the catalog fails', async () => {
    status = 503;
    await expect(catalog().dimensionOf('all-MiniLM-L6-v2')).rejects.toMatchObject({
      code: KnowledgeBaseErrorCode.EmbeddingServiceUnavailable,
    });
  });
});
