import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { errorBodyOf } from './api-error';
import {
  aclServiceClient,
  documentServiceClient,
  embeddingServiceClient,
  queryServiceClient,
  webhookServiceClient,
} from './clients';

/** Each factory calls its service's paths with the caller's token; errors keep their body. */
describe('generated client factories', () => {
  let server: Server;
  let baseUrl: string;
  const seen: Array<{ method?: string; url?: string; authorization?: string; accept?: string }> =
    [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push({
        method: request.method,
        url: request.url,
        authorization: request.headers.authorization,
        accept: request.headers.accept,
      });
      const refused = request.url?.includes('missing');
      response.writeHead(refused ? 404 : 200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify(refused ? { error: { code: 'not_found', message: 'gone' } } : { ok: 1 }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it.each([
    [
      'document',
      () => documentServiceClient({ baseUrl, token: 't' }).GET('/v1/stats'),
      '/v1/stats',
    ],
    ['query', () => queryServiceClient({ baseUrl, token: 't' }).GET('/v1/models'), '/v1/models'],
    [
      'acl',
      () => aclServiceClient({ baseUrl, token: 't' }).GET('/v1/acl/policy'),
      '/v1/acl/policy',
    ],
    [
      'webhook',
      () => webhookServiceClient({ baseUrl, token: 't' }).GET('/v1/webhooks'),
      '/v1/webhooks',
    ],
    [
      'embedding',
      () => embeddingServiceClient({ baseUrl, token: 't' }).GET('/v1/models'),
      '/v1/models',
    ],
  ])('%s-service: GET with the bearer token', async (_name, call, path) => {
    const { data } = await call();
    expect(data).toEqual({ ok: 1 });
    expect(seen.at(-1)).toEqual({
      method: 'GET',
      url: path,
      authorization: 'Bearer t',
      accept: 'application/json',
    });
  });

  it('fills path parameters and gives an error answer with its code', async () => {
    const client = documentServiceClient({ baseUrl });
    const { data, error, response } = await client.GET('/v1/documents/{id}', {
      params: { path: { id: 'missing one' } },
    });
    expect(seen.at(-1)).toMatchObject({
      url: '/v1/documents/missing%20one',
      authorization: undefined,
    });
    expect(data).toBeUndefined();
    expect(response.status).toBe(404);
    expect(errorBodyOf(error)).toEqual({ code: 'not_found', message: 'gone' });
    expect(errorBodyOf('<html>bad gateway</html>')).toEqual({});
  });
});
