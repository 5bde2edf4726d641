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
