/**
 * Rate limits and the audit of document access, end to end (docs/adr/0020): the services run with
 * small budgets, counted in Redis; a spent budget answers 429 with Retry-After over REST and
 * RESOURCE_EXHAUSTED over gRPC; uploads, reads, edits and deletes show up in the audit log.
 */
import { type ServiceError, status } from '@grpc/grpc-js';
import { ERROR_CODE_METADATA, RETRY_AFTER_METADATA } from '@kb/grpc';

import { grpcSearch, kbClient } from '../support/grpc-client';
import { testToken, useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(180_000);

const SEARCHES_PER_CALLER = 3;
const UPLOADS_PER_CALLER = 3;
// A search's hit details are one read: the searches above stay within it.
const READS_PER_CALLER = 5;

describe('rate limits and audit', () => {
  const suite = useSuite('limits', 4900, {
    RATE_LIMIT_WINDOW_SECONDS: '60',
    RATE_LIMIT_SEARCH_PER_PRINCIPAL: String(SEARCHES_PER_CALLER),
    RATE_LIMIT_SEARCH_PER_TENANT: '0',
    RATE_LIMIT_UPLOAD_PER_PRINCIPAL: String(UPLOADS_PER_CALLER),
    RATE_LIMIT_UPLOAD_PER_TENANT: '0',
    RATE_LIMIT_ADMIN_PER_PRINCIPAL: '0',
    RATE_LIMIT_ADMIN_PER_TENANT: '0',
    RATE_LIMIT_READ_PER_PRINCIPAL: String(READS_PER_CALLER),
    RATE_LIMIT_READ_PER_TENANT: '0',
  });
  const aclUrl = () => `http://127.0.0.1:${suite.ports['acl-service']!.port}`;
  const grpcAddress = () => `127.0.0.1:${suite.ports['query-service']!.grpcPort}`;

  const restSearch = async (user: string) =>
    fetch(`${suite.queryUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth({ user })) },
      body: JSON.stringify({ query: 'orbits and transfers', topK: 3 }),
    });

  it('answers 429 rate_limited with Retry-After once a caller spent the search budget', async () => {
    for (let i = 0; i < SEARCHES_PER_CALLER; i++) {
      expect((await restSearch('searcher')).status).toBe(200);
    }
    const limited = await restSearch('searcher');
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await limited.json()).toEqual({
      error: {
        code: 'rate_limited',
        message: 'too many search calls from this caller; retry later',
      },
    });

    // gRPC draws on the same budget.
    const client = kbClient(grpcAddress());
    try {
      const token = await testToken({ tenant: suite.tenant, user: 'searcher', roles: ['editor'] });
      const error = (await grpcSearch(client, token, { query: 'x' }).catch(
        (e: unknown) => e,
      )) as ServiceError;
      expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(error.metadata.get(ERROR_CODE_METADATA)).toEqual(['rate_limited']);
      expect(Number(error.metadata.get(RETRY_AFTER_METADATA)[0])).toBeGreaterThanOrEqual(1);
    } finally {
      client.close();
    }

    // Budgets are per caller: another user of the tenant still searches.
    expect((await restSearch('someone-else')).status).toBe(200);
  });

  it('limits uploads per caller too, before the file is taken', async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= UPLOADS_PER_CALLER; i++) {
      const response = await suite.upload(
        `limit-${i}.txt`,
        `upload number ${i}`,
        'text/plain',
        suite.tenant,
        {
          caller: { user: 'uploader' },
        },
      );
      statuses.push(response.status);
    }
    expect(statuses).toEqual([202, 202, 202, 429]);
  });

  it('limits reads of listings, text and content per caller (review N6)', async () => {
    const headers = await suite.auth({ user: 'reader' });
    const statuses: number[] = [];
    for (let i = 0; i <= READS_PER_CALLER; i++) {
      const path = i % 2 === 0 ? '/v1/documents?limit=1' : '/v1/stats';
      statuses.push((await fetch(`${suite.documentUrl}${path}`, { headers })).status);
    }
    expect(statuses).toEqual([...Array<number>(READS_PER_CALLER).fill(200), 429]);
    const limited = await fetch(
      `${suite.documentUrl}/v1/documents/00000000-0000-4000-8000-000000000000/text`,
      { headers },
    );
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({
      error: { code: 'rate_limited', message: 'too many read calls from this caller; retry later' },
    });
  });

  it('audits an upload, its reads, an edit and the delete, for tenant admins', async () => {
    const uploaded = await suite.upload('audited.md', '# Audited\n\nA document.', 'text/markdown');
    expect(uploaded.status).toBe(202);
    const { id } = (await uploaded.json()) as { id: string };
    const headers = await suite.auth();
    expect((await fetch(`${suite.documentUrl}/v1/documents/${id}`, { headers })).status).toBe(200);
    const original = await fetch(`${suite.documentUrl}/v1/documents/${id}/content`, { headers });
    expect(await original.text()).toBe('# Audited\n\nA document.');
    expect((await fetch(`${suite.documentUrl}/v1/documents?limit=5`, { headers })).status).toBe(
      200,
    );
    const edited = await fetch(`${suite.documentUrl}/v1/documents/${id}`, {
      method: 'PATCH',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ tags: ['audited'] }),
    });
    expect(edited.status).toBe(200);
    const deleted = await fetch(`${suite.documentUrl}/v1/documents/${id}`, {
      method: 'DELETE',
      headers,
    });
    expect(deleted.status).toBe(200);

    const admin = await suite.auth({ user: 'root', roles: ['admin'] });
    const expected = [
      'document_uploaded',
      'document_read',
      'documents_listed',
      'document_edited',
      'document_deleted',
    ];
    const log = await waitFor(
      async () =>
        (
          (await (
            await fetch(`${aclUrl()}/v1/audit?document=${id}`, { headers: admin })
          ).json()) as {
            items: Array<{ action: string; actor: string; documentIds: string[]; detail: string }>;
          }
        ).items,
      (items) =>
        expected.every((action) => items.some((item) => item.action === action)) &&
        items.some((item) => item.detail.includes('"part":"content"')),
      30_000,
    );
    for (const item of log.filter((i) => expected.includes(i.action))) {
      expect(item).toMatchObject({ actor: 'tester', documentIds: expect.arrayContaining([id]) });
    }
    // The original's download is a read of its own (review L5).
    expect(log).toContainEqual(
      expect.objectContaining({
        action: 'document_read',
        detail: '{"version":1,"part":"content"}',
      }),
    );
  });
});
