import type { Access, AccessPolicy, Caller } from '@kb/auth';
import { mintToken, TokenVerifier } from '@kb/auth';
import {
  ACCESS_POLICY,
  RATE_LIMITER,
  type RateLimiter,
  TOKEN_VERIFIER,
  useRestDefaults,
} from '@kb/http';
import type { KnowledgeBasePort } from '@kb/mcp';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { KnowledgeBaseToolsAdapter } from './knowledge-base-tools.adapter';
import { MCP_BATCH_NOT_SUPPORTED, McpController } from './mcp.controller';

const SECRET = 'a-secret-for-unit-tests-only-0123456789';

/** POST /mcp over HTTP with a port that counts searches and a limiter that counts points. */
describe('POST /mcp', () => {
  let app: INestApplication;
  let url: string;
  let token: string;
  let searches = 0;
  let points = 0;

  beforeAll(async () => {
    const port = {
      search: async () => (searches++, { hits: [] }),
    } as unknown as KnowledgeBasePort;
    const policy: AccessPolicy = {
      accessOf: async (caller: Caller): Promise<Access> => ({
        tenantId: caller.tenantId,
        userId: caller.userId,
        principals: [`u:${caller.userId}`, 't:*'],
        documentActions: new Set(['read']),
        isAdmin: false,
      }),
      authorize: async () => undefined,
    };
    const limiter: RateLimiter = { consume: async () => void points++ };
    const verifier = new TokenVerifier({ secret: SECRET });
    const moduleRef = await Test.createTestingModule({
      controllers: [McpController],
      providers: [
        { provide: KnowledgeBaseToolsAdapter, useValue: { portFor: () => port } },
        { provide: TOKEN_VERIFIER, useValue: verifier },
        { provide: ACCESS_POLICY, useValue: policy },
        { provide: RATE_LIMITER, useValue: limiter },
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    useRestDefaults(app, verifier);
    await app.listen(0, '127.0.0.1');
    url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/mcp`;
    token = await mintToken({ tenant: 'acme', user: 'agent', roles: ['viewer'] }, SECRET);
  });
  afterAll(() => app.close());
  beforeEach(() => {
    searches = 0;
    points = 0;
  });

  const searchCall = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'kb_search', arguments: { query: `query ${id}`, mode: 'lexical' } },
  });

  const post = async (body: unknown) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('runs one tool call for one message and one rate-limit point', async () => {
    const { status, body } = await post(searchCall(1));
    expect(status).toBe(200);
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text' }] } });
    expect({ searches, points }).toEqual({ searches: 1, points: 1 });
  });

  it('refuses a JSON-RPC batch with 400, Invalid Request and a stable code, running none of it (N4)', async () => {
    const { status, body } = await post([searchCall(1), searchCall(2), searchCall(3)]);
    expect(status).toBe(400);
    expect(body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: expect.stringMatching(/batches are not supported/),
        data: { code: MCP_BATCH_NOT_SUPPORTED },
      },
    });
    expect(searches).toBe(0);
  });

  it('refuses an empty batch the same way', async () => {
    const { status, body } = await post([]);
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: { data: { code: MCP_BATCH_NOT_SUPPORTED } } });
  });
});
