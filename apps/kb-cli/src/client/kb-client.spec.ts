import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { KbClient } from './kb-client';

/** `kb sync` plans with every document of its prefix: it must follow the listing's pages (N6). */
describe('KbClient.listByExternalIdPrefix', () => {
  let server: Server;
  const asked: URLSearchParams[] = [];
  const documents = Array.from({ length: 5 }, (_, i) => ({
    id: `id-${i}`,
    externalId: `folder:notes/${i}.md`,
    sha256: String(i).repeat(64),
  }));

  beforeAll(async () => {
    // Pages of two, in order, as document-service answers them.
    server = createServer((request, response) => {
      const query = new URL(request.url!, 'http://x').searchParams;
      asked.push(query);
      const from = Number(query.get('cursor') ?? 0);
      const items = documents.slice(from, from + 2);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          items,
          nextCursor: from + 2 < documents.length ? String(from + 2) : null,
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reads every page, following nextCursor, with the largest page the API takes', async () => {
    const { port } = server.address() as AddressInfo;
    const client = new KbClient({
      documentsUrl: `http://127.0.0.1:${port}`,
      grpcAddress: '127.0.0.1:1',
      token: 'a-token',
    });
    expect(await client.listByExternalIdPrefix('folder:notes/')).toEqual(documents);
    expect(asked.map((q) => [q.get('externalIdPrefix'), q.get('limit'), q.get('cursor')])).toEqual([
      ['folder:notes/', '1000', null],
      ['folder:notes/', '1000', '2'],
      ['folder:notes/', '1000', '4'],
    ]);
  });
});

/** Uploads go as multipart through the generated client, and a busy (503) suite is retried. */
describe('KbClient uploads', () => {
  let server: Server;
  const seen: Array<{ status: number; type?: string; authorization?: string; body: string }> = [];
  const answers = [503, 409];

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (part: Buffer) => (body += part.toString()));
      request.on('end', () => {
        const status = answers.shift() ?? 202;
        seen.push({
          status,
          type: request.headers['content-type'],
          authorization: request.headers.authorization,
          body,
        });
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify(
            status === 202
              ? { id: 'd1', status: 'pending' }
              : { error: { code: status === 409 ? 'conflict' : 'unavailable', message: 'no' } },
          ),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('retries a 503, then reports the refusal with its status and code', async () => {
    const { port } = server.address() as AddressInfo;
    const client = new KbClient({
      documentsUrl: `http://127.0.0.1:${port}`,
      grpcAddress: '127.0.0.1:1',
      token: 'a-token',
    });
    const result = await client.tryUpload('a.md', Buffer.from('hello'), 'text/markdown', {
      externalId: 'folder:notes.md',
      knowledgeBaseIds: ['kb-a'],
    });
    expect(result).toEqual({ ok: false, status: 409, code: 'conflict', message: 'no' });
    expect(seen.map((s) => s.status)).toEqual([503, 409]);
    const last = seen.at(-1)!;
    expect(last.authorization).toBe('Bearer a-token');
    expect(last.type).toMatch(/^multipart\/form-data; boundary=/);
    expect(last.body).toContain('name="file"; filename="a.md"');
    expect(last.body).toContain('hello');
    expect(last.body).toContain('["kb-a"]');
    expect(last.body).toContain('folder:notes.md');

    await expect(client.upload('b.md', 'x', { tags: ['t'] })).resolves.toEqual({
      id: 'd1',
      status: 'pending',
    });
  });
});
