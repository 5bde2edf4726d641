import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { guardedLookup, HttpReceiverSender } from './receiver.sender';

describe('HttpReceiverSender', () => {
  let server: Server;
  let base = '';
  const seen: Array<{ headers: Record<string, unknown>; body: string }> = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push({ headers: request.headers, body });
        if (request.url === '/slow') return; // never answers
        if (request.url === '/endless') {
          // Answers 200, then streams a body that never ends.
          response.writeHead(200);
          const drip = setInterval(() => response.write(Buffer.alloc(16 * 1024)), 1);
          response.on('close', () => clearInterval(drip));
          return;
        }
        if (request.url === '/redirect') {
          response.writeHead(302, { location: '/ok' }).end();
          return;
        }
        response.writeHead(request.url === '/fail' ? 503 : 204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const open = new HttpReceiverSender({ timeoutMs: 500, allowPrivate: true, userAgent: 'test' });

  it('POSTs the body with the given headers; a 2xx succeeds', async () => {
    const result = await open.post(`${base}/ok`, { 'webhook-id': 'msg_1' }, '{"a":1}');
    expect(result).toEqual({ statusCode: 204, error: null });
    expect(seen.at(-1)).toMatchObject({
      body: '{"a":1}',
      headers: { 'webhook-id': 'msg_1', 'content-type': 'application/json' },
    });
  });

  it('does not read more than a bounded answer', async () => {
    await expect(open.post(`${base}/endless`, {}, '{}')).resolves.toEqual({
      statusCode: 200,
      error: null,
    });
  });

  it('reports a non-2xx answer (redirects are not followed) and a timeout as failures', async () => {
    await expect(open.post(`${base}/fail`, {}, '{}')).resolves.toEqual({
      statusCode: 503,
      error: 'receiver answered HTTP 503',
    });
    await expect(open.post(`${base}/redirect`, {}, '{}')).resolves.toEqual({
      statusCode: 302,
      error: 'receiver answered HTTP 302',
    });
    await expect(open.post(`${base}/slow`, {}, '{}')).resolves.toEqual({
      statusCode: null,
      error: 'no answer within 500 ms',
    });
  });

  it('does not connect to a non-public receiver when private receivers are off', async () => {
    const strict = new HttpReceiverSender({ timeoutMs: 500, allowPrivate: false, userAgent: 't' });
    const before = seen.length;
    await expect(strict.post(`${base}/ok`, {}, '{}')).resolves.toEqual({
      statusCode: null,
      error: '127.0.0.1 is a non-public address',
    });
    const port = new URL(base).port;
    const byName = await strict.post(`http://localhost:${port}/ok`, {}, '{}');
    expect(byName.statusCode).toBeNull();
    expect(byName.error).toMatch(/localhost resolves to .*, a non-public address/);
    expect(seen.length).toBe(before);
  });

  it('lets public names through its lookup', (done) => {
    // A name that resolves without the network: the lookup only judges what it is given.
    guardedLookup('127.0.0.1', {}, (error) => {
      expect(error?.message).toMatch(/non-public/);
      done();
    });
  });
});
