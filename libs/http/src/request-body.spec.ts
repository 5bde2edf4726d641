import { request as httpRequest } from 'node:http';

import { mintToken, TokenVerifier } from '@kb/auth';
import { Body, Controller, type INestApplication, Module, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { useRestDefaults } from './bootstrap';
import { BodyLimit } from './request-body';

const SECRET = 'a-secret-for-unit-tests-only-0123456789';
let handled = 0;

@Controller('echo')
class EchoController {
  @Post()
  echo(@Body() body: unknown): unknown {
    handled++;
    return { body };
  }

  @Post('large')
  @BodyLimit('1mb')
  large(@Body() body: { text: string }): unknown {
    handled++;
    return { length: body.text.length };
  }
}

@Module({ controllers: [EchoController] })
class EchoModule {}

/**
 * Bodies are read after the guards (security review N3), as `bootHttpService` sets it up: Nest's
 * own parsers off, `BodyParserInterceptor` from `useRestDefaults`.
 */
describe('BodyParserInterceptor', () => {
  let app: INestApplication;
  let url: URL;
  let token: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [EchoModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false, bodyParser: false });
    useRestDefaults(app, new TokenVerifier({ secret: SECRET }));
    await app.listen(0, '127.0.0.1');
    url = new URL(`${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/echo`);
    token = await mintToken({ tenant: 'acme', user: 'ann' }, SECRET);
  });
  afterAll(() => app.close());
  beforeEach(() => (handled = 0));

  const post = async (path: string, body: string, authorization?: string) => {
    const response = await fetch(new URL(path, url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('parses an authenticated body under the default limit', async () => {
    expect(await post('/echo', '{"a":1}', `Bearer ${token}`)).toEqual({
      status: 201,
      body: { body: { a: 1 } },
    });
  });

  it('answers 413 payload_too_large, naming the limit, for an authenticated body over it', async () => {
    const big = JSON.stringify({ text: 'x'.repeat(200 * 1024) });
    expect(await post('/echo', big, `Bearer ${token}`)).toEqual({
      status: 413,
      body: {
        error: {
          code: 'payload_too_large',
          message: 'the request body is larger than this route accepts (100kb)',
        },
      },
    });
    expect(handled).toBe(0);
  });

  it("takes a route's own @BodyLimit", async () => {
    const big = JSON.stringify({ text: 'x'.repeat(200 * 1024) });
    expect(await post('/echo/large', big, `Bearer ${token}`)).toEqual({
      status: 201,
      body: { length: 200 * 1024 },
    });
    const tooBig = JSON.stringify({ text: 'x'.repeat(1100 * 1024) });
    expect((await post('/echo/large', tooBig, `Bearer ${token}`)).status).toBe(413);
  });

  it('answers 400 bad_request for malformed JSON', async () => {
    expect(await post('/echo', '{"a":', `Bearer ${token}`)).toMatchObject({
      status: 400,
      body: { error: { code: 'bad_request' } },
    });
  });

  it('answers 401 to an unauthenticated body before reading it', async () => {
    // 15 MB announced, 64 kB sent: the answer must come without the rest.
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(new URL('/echo/large', url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': 15 * 1024 * 1024 },
      });
      const timer = setTimeout(() => {
        request.destroy();
        reject(new Error('no answer before the body was sent'));
      }, 5000);
      request.on('response', (response) => {
        clearTimeout(timer);
        response.resume();
        resolve(response.statusCode ?? 0);
        request.destroy();
      });
      request.on('error', () => undefined);
      request.write(`{"text":"${'x'.repeat(64 * 1024)}`);
    });
    expect(status).toBe(401);
    expect(handled).toBe(0);
  });
});
