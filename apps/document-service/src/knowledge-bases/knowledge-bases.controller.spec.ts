import {
  type Access,
  type AccessPolicy,
  AuthError,
  AuthErrorCode,
  type Caller,
  mintToken,
  TokenVerifier,
} from '@kb/auth';
import {
  ACCESS_POLICY,
  FlexibleRateLimiter,
  RATE_LIMITER,
  TOKEN_VERIFIER,
  useRestDefaults,
} from '@kb/http';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { DocumentReads } from '../documents/document-reads.service';
import { DocumentsService } from '../documents/documents.service';
import { KnowledgeBaseDirectory } from '../pipelines/knowledge-base-directory.port';
import {
  DEFAULTS,
  documentServiceFixture,
  newAccess,
  servedModels,
} from '../testing/document-service.fixture';
import { CollectionsController } from './collections.controller';
import { CollectionsService } from './collections.service';
import { KnowledgeBaseDirectoryService } from './knowledge-base-directory.service';
import { KnowledgeBaseDocumentsController } from './knowledge-base-documents.controller';
import { KnowledgeBasesController } from './knowledge-bases.controller';
import { KnowledgeBasesService } from './knowledge-bases.service';

const SECRET = 'a-test-secret-of-at-least-thirty-two-chars';

/** Access as acl-service would expand it: `bob` only reads, acl-service is down for `offline`. */
const policy: AccessPolicy = {
  async accessOf(caller: Caller): Promise<Access> {
    if (caller.userId === 'offline') {
      throw new AuthError(AuthErrorCode.Unavailable, 'authorization is unavailable, retry later');
    }
    return newAccess({
      userId: caller.userId,
      ...(caller.userId === 'bob' ? { documentActions: new Set(['read'] as const) } : {}),
    });
  },
  async authorize() {},
};

/**
 * The knowledge-base routes over HTTP: the caller and access come from
 * @Authenticated({ access: true }), and clients see the codes and statuses they always have.
 */
describe('knowledge-base routes through @Authenticated({ access: true })', () => {
  let app: INestApplication;
  let url: string;
  const verifier = new TokenVerifier({ secret: SECRET });
  const f = documentServiceFixture();
  const call = async (user: string, path: string, init: RequestInit = {}) =>
    fetch(`${url}/v1/knowledge-bases${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${await mintToken({ tenant: 't1', user }, SECRET)}`,
        'content-type': 'application/json',
      },
    });

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [
        CollectionsController,
        KnowledgeBasesController,
        KnowledgeBaseDocumentsController,
      ],
      providers: [
        { provide: KnowledgeBasesService, useValue: f.knowledgeBases },
        { provide: CollectionsService, useValue: f.collections },
        { provide: DocumentsService, useValue: f.documents },
        { provide: DocumentReads, useValue: f.reads },
        {
          provide: KnowledgeBaseDirectory,
          useValue: new KnowledgeBaseDirectoryService(
            f.knowledgeBasesRepository,
            DEFAULTS,
            servedModels({ [DEFAULTS.model]: 384 }),
          ),
        },
        { provide: TOKEN_VERIFIER, useValue: verifier },
        { provide: ACCESS_POLICY, useValue: policy },
        // No budgets set: nothing here is limited.
        {
          provide: RATE_LIMITER,
          useValue: new FlexibleRateLimiter({ windowSeconds: 60, buckets: {} }, null),
        },
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    useRestDefaults(app, verifier);
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });
  afterAll(() => app.close());

  it('creates, reads and lists with the caller’s tenant', async () => {
    const created = await call('alice', '', {
      method: 'POST',
      body: JSON.stringify({ id: 'handbooks', name: 'Handbooks' }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ id: 'handbooks', name: 'Handbooks' });
    expect((await call('bob', '/handbooks')).status).toBe(200);
    expect(await (await call('bob', '')).json()).toMatchObject({
      items: [{ id: 'handbooks', stats: { status: 'active', documentCount: 0 } }],
      total: 1,
      nextCursor: null,
    });
    expect(await (await call('bob', '/handbooks/documents')).json()).toEqual({
      items: [],
      nextCursor: null,
    });
  });

  it('answers with the same codes and statuses as before', async () => {
    const denied = await call('bob', '', {
      method: 'POST',
      body: JSON.stringify({ id: 'x', name: 'x' }),
    });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual({
      error: { code: 'permission_denied', message: 'write on documents is not granted to bob' },
    });
    const taken = await call('alice', '', {
      method: 'POST',
      body: JSON.stringify({ id: 'handbooks', name: 'again' }),
    });
    expect(taken.status).toBe(409);
    expect(await taken.json()).toMatchObject({ error: { code: 'knowledge_base_exists' } });
    const missing = await call('alice', '/nope');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'knowledge_base_not_found' } });
    expect((await call('alice', '/nope/documents')).status).toBe(404);
  });

  it('fails closed when access cannot be resolved, even for reads', async () => {
    for (const path of ['', '/handbooks', '/handbooks/documents']) {
      const response = await call('offline', path);
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ error: { code: 'unavailable' } });
    }
  });
});
