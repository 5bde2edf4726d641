import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { ApiError, WebhooksClient } from './webhooks.client';

/** webhook-service's generated client: the request the CLI sends, and its refusals as ApiError. */
describe('WebhooksClient', () => {
  let server: Server;
  let client: WebhooksClient;
  const seen: Array<{ method?: string; url?: string; authorization?: string; body: string }> = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (part: Buffer) => (body += part.toString()));
      request.on('end', () => {
        seen.push({
          method: request.method,
          url: request.url,
          authorization: request.headers.authorization,
          body,
        });
        const found = request.method === 'POST';
        response.writeHead(found ? 201 : 404, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify(
            found
              ? { id: 'w1', secret: 's' }
              : { error: { code: 'not_found', message: 'no such webhook' } },
          ),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = new WebhooksClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 't');
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('posts a new webhook as JSON with the bearer token', async () => {
    const input = { url: 'https://example.test/hook', events: ['document.indexed'] };
    await expect(client.create(input)).resolves.toEqual({ id: 'w1', secret: 's' });
    expect(seen.at(-1)).toEqual({
      method: 'POST',
      url: '/v1/webhooks',
      authorization: 'Bearer t',
      body: JSON.stringify(input),
    });
  });

  it('asks for deliveries with their filters and maps a refusal to ApiError', async () => {
    const refusal = await client
      .deliveries('w 1', { status: 'failed', limit: 5 })
      .catch((error: unknown) => error);
    expect(seen.at(-1)).toMatchObject({
      method: 'GET',
      url: '/v1/webhooks/w%201/deliveries?status=failed&limit=5',
    });
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({ status: 404, code: 'not_found' });
  });
});
