import { Body, Controller, type INestApplication, Module, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { useRestDefaults } from './bootstrap';

@Controller('echo')
class EchoController {
  @Post()
  echo(@Body() body: unknown): unknown {
    return body;
  }
}

@Module({ controllers: [EchoController] })
class EchoModule {}

/** Errors raised by the body parser, before any handler runs, answer in the API's error shape. */
describe('request limits', () => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [EchoModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    useRestDefaults(app);
    await app.listen(0, '127.0.0.1');
    url = `${await app.getUrl()}/echo`.replace('[::1]', '127.0.0.1');
  });
  afterAll(() => app.close());

  const post = (body: string) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it('answers 413 payload_too_large for a body over the limit, not 500', async () => {
    const response = await post(JSON.stringify({ query: 'x'.repeat(2 * 1024 * 1024) }));
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      error: { code: 'payload_too_large', message: 'request entity too large' },
    });
  });

  it('answers 400 bad_request for a body that is not JSON', async () => {
    const response = await post('{"query": ');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: 'bad_request' } });
  });

  it('still echoes a body within the limit', async () => {
    expect(await (await post('{"query":"tides"}')).json()).toEqual({ query: 'tides' });
  });
});
