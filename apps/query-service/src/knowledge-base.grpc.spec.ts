import { setTimeout as sleep } from 'node:timers/promises';

import { credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import type { DocumentView } from '@kb/api-client';
import {
  type Access,
  type AccessPolicy,
  AuthError,
  AuthErrorCode,
  type Caller,
  mintToken,
  TokenVerifier,
} from '@kb/auth';
import { kbv1, type TenantId } from '@kb/contracts';
import {
  callWithToken,
  ERROR_CODE_METADATA,
  RETRY_AFTER_METADATA,
  startGrpcOnLoopback,
} from '@kb/grpc';
import {
  ACCESS_POLICY,
  RATE_LIMITER,
  type RateLimitBucket,
  type RateLimiter,
  RateLimitError,
  TOKEN_VERIFIER,
} from '@kb/http';
import { parseServerTiming, timedStage } from '@kb/observability';
import { Test } from '@nestjs/testing';

import { SearchAudit } from './audit/search-audit.publisher';
import { ContextGrpcController } from './context/context.grpc';
import { ContextService } from './context/context.service';
import { ContextRerankDefaults } from './context/context-rerank.defaults';
import { ConversationRewriter } from './context/conversation.rewriter';
import { DocumentsClient } from './documents/documents.client';
import { DocumentServiceError } from './documents/documents.errors';
import { DocumentsGrpcController } from './documents/documents.grpc';
import { SearchError, SearchErrorCode } from './search/search.errors';
import { SearchGrpcController } from './search/search.grpc';
import {
  type SearchRequest,
  searchRequestSchema,
  type SearchResponse,
} from './search/search.model';
import { SearchService } from './search/search.service';
import { knowledgeBaseService, toSearchResponse } from './search/search.wire';
import { SimilarService } from './search/similar.service';

const SECRET = 'a-test-secret-of-at-least-thirty-two-chars';
// The definition query-service serves (its Search serializer sends a cached answer's hits as the
// bytes encoded the first time), under the generated client.
const SERVICES = { 'kb.v1.KnowledgeBase': knowledgeBaseService };
const DOCUMENT_ID = '3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60';
/** An original of 150 000 bytes, relayed in messages of at most 64 KiB. */
const ORIGINAL = Buffer.from(Array.from({ length: 150_000 }, (_, i) => i % 251));

/** The search service as the controllers see it: records calls, answers what the test set. */
class FakeSearch {
  calls: Array<{ tenantId: TenantId; request: SearchRequest; principals?: string[] }> = [];
  answer: () => Promise<SearchResponse> = async () => response();

  search(tenantId: TenantId, request: SearchRequest, principals?: string[]) {
    this.calls.push({ tenantId, request, principals });
    return this.answer();
  }
}

/** Access as acl-service would expand it: `root` is a tenant admin, `offline` finds it down. */
const policy: AccessPolicy = {
  async accessOf(caller: Caller): Promise<Access> {
    if (caller.userId === 'offline') {
      throw new AuthError(AuthErrorCode.Unavailable, 'authorization is unavailable, retry later');
    }
    return {
      tenantId: caller.tenantId,
      userId: caller.userId,
      principals: [`u:${caller.userId}`, 't:*'],
      documentActions: new Set(['read']),
      isAdmin: caller.userId === 'root',
    };
  },
  async authorize() {},
};

function response(overrides: Partial<SearchResponse> = {}): SearchResponse {
  return {
    hits: [
      {
        documentId: DOCUMENT_ID,
        documentVersion: 2,
        chunkIndex: 3,
        title: 'Saturn',
        text: 'Titan orbits Saturn.',
        startOffset: 10,
        endOffset: 30,
        score: 0.75,
        strategies: ['semantic', 'lexical'],
        isMatch: true,
        page: 2,
        headingPath: ['Moons', 'Titan'],
        tags: ['planets'],
        metadata: { year: 2024 },
        contentType: 'text/plain',
        filename: 'saturn.txt',
        createdAt: '2026-11-23T10:00:00.000Z',
        updatedAt: '2026-11-23T10:05:00.000Z',
      },
    ],
    tookMs: 4,
    confidence: 'high',
    rerank: 'off',
    mmr: 'off',
    details: 'applied',
    cache: 'hit',
    mode: 'auto',
    queryType: 'question',
    total: 1,
    totalRelation: 'eq',
    degraded: false,
    ...overrides,
  };
}

function record(): DocumentView {
  return {
    id: DOCUMENT_ID,
    title: 'Saturn',
    filename: 'saturn.txt',
    contentType: 'text/plain',
    sizeBytes: 120,
    sha256: 'ab'.repeat(32),
    version: 2,
    status: 'indexed',
    failure: null,
    chunkCount: 4,
    metadata: { year: 2024, tags: ['planets'] },
    tags: ['planets'],
    knowledgeBaseIds: ['kb-a'],
    tenantId: 't1',
    explicitKnowledgeBaseIds: [],
    ownerId: 'alice',
    acl: { users: [], groups: [], roles: [], tenant: true },
    stageTimes: {},
    externalId: null,
    state: 'active',
    createdAt: '2026-11-23T10:00:00.000Z',
    updatedAt: '2026-11-23T10:05:00.000Z',
  };
}

/** Records what each call draws on; `greedy` has spent every budget. */
class FakeLimiter implements RateLimiter {
  calls: Array<[RateLimitBucket, string]> = [];
  async consume(bucket: RateLimitBucket, caller: Pick<Caller, 'userId'>): Promise<void> {
    this.calls.push([bucket, caller.userId]);
    if (caller.userId === 'greedy') throw new RateLimitError('too many search calls', 7);
  }
}

/** Similarity search as the controller sees it: records the request, answers one hit. */
const similar = {
  calls: [] as unknown[],
  similar: jest.fn(async (_caller: Caller, request: unknown) => {
    similar.calls.push(request);
    return { hits: response().hits, tookMs: 2, unit: 'documents' as const, details: 'applied' };
  }),
};

async function boot(search: FakeSearch, documents: Partial<DocumentsClient>) {
  const audit = { record: jest.fn() };
  const limiter = new FakeLimiter();
  const moduleRef = await Test.createTestingModule({
    controllers: [SearchGrpcController, ContextGrpcController, DocumentsGrpcController],
    providers: [
      { provide: SearchService, useValue: search },
      { provide: SimilarService, useValue: similar },
      ContextService,
      ContextRerankDefaults,
      ConversationRewriter,
      { provide: DocumentsClient, useValue: documents },
      { provide: SearchAudit, useValue: audit },
      { provide: TOKEN_VERIFIER, useValue: new TokenVerifier({ secret: SECRET }) },
      { provide: ACCESS_POLICY, useValue: policy },
      { provide: RATE_LIMITER, useValue: limiter },
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  const address = await startGrpcOnLoopback(app, SERVICES);
  return {
    app,
    audit,
    limiter,
    client: new kbv1.KnowledgeBaseClient(address, credentials.createInsecure()),
  };
}

const token = (user: string) => mintToken({ tenant: 't1', user }, SECRET);

// The generated client's calls as kb-cli and the e2e suite make them (test/support/grpc-client.ts).
type Client = kbv1.KnowledgeBaseClient;
const grpcSearch = (client: Client, bearer: string, request: Partial<kbv1.SearchRequest>) =>
  callWithToken<kbv1.SearchRequest, kbv1.SearchResponse>(
    client,
    client.search,
    kbv1.SearchRequest.fromPartial(request),
    bearer,
  );
const grpcRetrieveContext = (
  client: Client,
  bearer: string,
  request: Partial<kbv1.RetrieveContextRequest>,
) =>
  callWithToken<kbv1.RetrieveContextRequest, kbv1.RetrieveContextResponse>(
    client,
    client.retrieveContext,
    kbv1.RetrieveContextRequest.fromPartial(request),
    bearer,
  );
const grpcGetDocument = (
  client: Client,
  bearer: string,
  documentId: string,
  options: Partial<kbv1.GetDocumentRequest> = {},
) =>
  callWithToken<kbv1.GetDocumentRequest, kbv1.GetDocumentResponse>(
    client,
    client.getDocument,
    kbv1.GetDocumentRequest.fromPartial({ documentId, ...options }),
    bearer,
  );
/** Every message of a GetDocumentContent stream, or its error. */
const grpcGetDocumentContent = async (client: Client, bearer: string, documentId: string) => {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${bearer}`);
  const messages: kbv1.GetDocumentContentResponse[] = [];
  for await (const message of client.getDocumentContent({ documentId }, metadata)) {
    messages.push(message as kbv1.GetDocumentContentResponse);
  }
  return messages;
};
const grpcListDocuments = (
  client: Client,
  bearer: string,
  request: Partial<kbv1.ListDocumentsRequest>,
) =>
  callWithToken<kbv1.ListDocumentsRequest, kbv1.ListDocumentsResponse>(
    client,
    client.listDocuments,
    kbv1.ListDocumentsRequest.fromPartial(request),
    bearer,
  );

async function failure(call: Promise<unknown>): Promise<ServiceError> {
  try {
    await call;
  } catch (error) {
    return error as ServiceError;
  }
  throw new Error('the call succeeded');
}

describe('kb.v1.KnowledgeBase over the Nest gRPC transport', () => {
  const search = new FakeSearch();
  const documents = {
    get: jest.fn(async (_caller: Caller, id: string) => {
      if (id !== DOCUMENT_ID) {
        throw DocumentServiceError.relayed(404, 'document_not_found', `document ${id} not found`);
      }
      return record();
    }),
    list: jest.fn(async () => ({ items: [record()], nextCursor: 'next-page' })),
    text: jest.fn(
      async (_caller: Caller, _id: string, window: { offset: number; limit: number }) => ({
        documentId: DOCUMENT_ID,
        version: 2,
        title: 'Saturn',
        contentType: 'text/markdown',
        format: 'markdown',
        length: 200,
        offset: window.offset,
        text: 'x'.repeat(window.limit),
        nextOffset: window.offset + window.limit,
        pages: [],
        headings: [{ start: 0, level: 1, text: 'Saturn' }],
      }),
    ),
  };
  let running: Awaited<ReturnType<typeof boot>>;

  beforeAll(async () => {
    running = await boot(search, documents);
  });
  afterAll(async () => {
    running.client.close();
    await running.app.close();
  });
  beforeEach(() => {
    search.calls = [];
    search.answer = async () => response();
  });

  it('searches as the caller, with their principals, and answers in the wire format', async () => {
    const filter = { 'metadata.year': { $gte: 2022 }, tags: { $nin: ['moons'] } };
    const answer = await grpcSearch(running.client, await token('alice'), {
      query: 'moons of Saturn',
      topK: 3,
      mode: kbv1.SearchMode.SEARCH_MODE_LEXICAL,
      fusion: kbv1.FusionMethod.FUSION_METHOD_RRF,
      filter,
    });
    expect(search.calls).toEqual([
      {
        tenantId: 't1',
        principals: ['u:alice', 't:*'],
        request: expect.objectContaining({
          query: 'moons of Saturn',
          topK: 3,
          mode: 'lexical',
          fusion: 'rrf',
          // The Struct arrived as the plain object a REST body would carry.
          filter: searchRequestSchema.parse({ query: 'q', filter }).filter,
        }),
      },
    ]);
    expect(answer).toMatchObject({
      tookMs: 4,
      cacheHit: true,
      confidence: 'high',
      degradedReason: '',
      mode: 'auto',
      queryType: 'question',
      total: 1,
      totalRelation: 'eq',
      hits: [
        {
          documentId: DOCUMENT_ID,
          chunkIndex: 3,
          strategies: ['semantic', 'lexical'],
          page: 2,
          headingPath: ['Moons', 'Titan'],
          tags: ['planets'],
          metadata: { year: 2024 },
          contentType: 'text/plain',
          filename: 'saturn.txt',
          createdAt: '2026-11-23T10:00:00.000Z',
          updatedAt: '2026-11-23T10:05:00.000Z',
        },
      ],
    });
    expect(running.audit.record).toHaveBeenCalledWith(
      't1',
      'alice',
      'search',
      'moons of Saturn',
      expect.any(Array),
      { knowledgeBaseIds: [], reranked: false },
    );
  });

  it('answers a cached (frozen) answer in full, every time it is served', async () => {
    const cached = response({
      hits: Object.freeze([
        ...response().hits,
        { ...response().hits[0]!, chunkIndex: 4, text: 'Enceladus too.', page: undefined },
      ]) as SearchResponse['hits'],
    });
    search.answer = async () => ({ ...cached, tookMs: 1 });
    const expected = toSearchResponse({ ...cached, tookMs: 1 });
    for (let i = 0; i < 3; i++) {
      const answer = await grpcSearch(running.client, await token('alice'), { query: 'moons' });
      expect(answer).toEqual(expected);
    }
    expect(expected.hits.map((h) => h.chunkIndex)).toEqual([3, 4]);
  });

  it('reports where the search spent its time in a server-timing response header', async () => {
    search.answer = async () => {
      await timedStage('lexical', () => sleep(15));
      return response();
    };
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${await token('alice')}`);
    const headers = await new Promise<Metadata>((resolve, reject) => {
      const call = running.client.search(
        kbv1.SearchRequest.fromPartial({ query: 'moons' }),
        metadata,
        (error) => error && reject(error),
      );
      call.on('metadata', resolve);
    });
    const stages = parseServerTiming(String(headers.get('server-timing')[0]));
    expect(stages.map((stage) => stage.name)).toEqual(['lexical', 'total']);
    expect(stages[0]!.ms).toBeGreaterThanOrEqual(10);
    // `total` is the search's own tookMs.
    expect(stages[1]).toEqual({ name: 'total', ms: 4 });
  });

  it('lets a tenant admin search without a principal filter', async () => {
    await grpcSearch(running.client, await token('root'), { query: 'anything' });
    expect(search.calls[0]?.principals).toBeUndefined();
  });

  it('answers each failure with the status of its kind and its code in x-error-code', async () => {
    const unauthenticated = await failure(grpcSearch(running.client, '', { query: 'x' }));
    expect(unauthenticated.code).toBe(status.UNAUTHENTICATED);
    expect(unauthenticated.metadata.get(ERROR_CODE_METADATA)).toEqual(['unauthenticated']);

    const invalid = await failure(grpcSearch(running.client, await token('alice'), { query: ' ' }));
    expect(invalid.code).toBe(status.INVALID_ARGUMENT);
    expect(invalid.details).toMatch(/^query: /);

    const aclDown = await failure(
      grpcSearch(running.client, await token('offline'), { query: 'x' }),
    );
    expect(aclDown.code).toBe(status.UNAVAILABLE);

    search.answer = () =>
      Promise.reject(new SearchError(SearchErrorCode.Unavailable, 'no index answered'));
    const unavailable = await failure(
      grpcSearch(running.client, await token('alice'), { query: 'x' }),
    );
    expect(unavailable).toMatchObject({ code: status.UNAVAILABLE, details: 'no index answered' });
    expect(unavailable.metadata.get(ERROR_CODE_METADATA)).toEqual(['search_unavailable']);

    search.answer = () => Promise.reject(new Error('connection string with a password'));
    const internal = await failure(
      grpcSearch(running.client, await token('alice'), { query: 'x' }),
    );
    expect(internal).toMatchObject({ code: status.INTERNAL, details: 'internal error' });
  });

  it('draws searches and context on the search budget, and answers RESOURCE_EXHAUSTED once spent', async () => {
    running.limiter.calls = [];
    await grpcSearch(running.client, await token('alice'), { query: 'x' });
    await grpcRetrieveContext(running.client, await token('alice'), { question: 'y' });
    await grpcGetDocument(running.client, await token('alice'), DOCUMENT_ID);
    expect(running.limiter.calls).toEqual([
      ['search', 'alice'],
      ['search', 'alice'],
    ]);

    search.calls = [];
    const limited = await failure(
      grpcSearch(running.client, await token('greedy'), { query: 'x' }),
    );
    expect(limited).toMatchObject({
      code: status.RESOURCE_EXHAUSTED,
      details: 'too many search calls',
    });
    expect(limited.metadata.get(ERROR_CODE_METADATA)).toEqual(['rate_limited']);
    expect(limited.metadata.get(RETRY_AFTER_METADATA)).toEqual(['7']);
    expect(search.calls).toEqual([]);
  });

  it('retrieves context through the search service and packs its hits', async () => {
    const context = await grpcRetrieveContext(running.client, await token('alice'), {
      question: 'What orbits Saturn?',
      tokenBudget: 0,
    });
    expect(search.calls[0]).toMatchObject({
      principals: ['u:alice', 't:*'],
      request: { query: 'What orbits Saturn?', topK: 20 },
    });
    expect(context).toMatchObject({
      tokenBudget: 2000,
      passages: [{ citation: 1, documentId: DOCUMENT_ID, text: 'Titan orbits Saturn.' }],
    });
  });

  it('takes auto mode, and a conversation whose follow-up it searches as a standalone query', async () => {
    await grpcSearch(running.client, await token('alice'), {
      query: 'what orbits Saturn?',
      mode: kbv1.SearchMode.SEARCH_MODE_AUTO,
    });
    expect(search.calls[0]?.request.mode).toBe('auto');
    const context = await grpcRetrieveContext(running.client, await token('alice'), {
      messages: [
        { role: 'user', content: 'Which moons orbit Saturn?' },
        { role: 'assistant', content: 'Titan, Enceladus and others.' },
        { role: 'user', content: 'and how big is the largest?' },
      ],
    });
    expect(context).toMatchObject({
      queryStrategy: 'history_rule',
      standaloneQuery: 'how big is the largest? (moons orbit saturn)',
    });
    expect(search.calls[1]?.request.query).toBe('how big is the largest? (moons orbit saturn)');
  });

  it('searches similar documents, and refuses a request naming both a text and a document', async () => {
    const answer = await callWithToken<kbv1.SearchSimilarRequest, kbv1.SearchSimilarResponse>(
      running.client,
      running.client.searchSimilar,
      kbv1.SearchSimilarRequest.fromPartial({ documentId: DOCUMENT_ID, unit: 'documents' }),
      await token('alice'),
    );
    expect(similar.calls.at(-1)).toMatchObject({
      documentId: DOCUMENT_ID,
      unit: 'documents',
      topK: 10,
    });
    expect(answer).toMatchObject({
      unit: 'documents',
      hits: [{ documentId: DOCUMENT_ID, page: 2 }],
    });
    const both = await failure(
      callWithToken(
        running.client,
        running.client.searchSimilar,
        kbv1.SearchSimilarRequest.fromPartial({ documentId: DOCUMENT_ID, text: 'moons' }),
        await token('alice'),
      ),
    );
    expect(both.code).toBe(status.INVALID_ARGUMENT);
  });

  it('reads documents from document-service as the caller and relays its refusals', async () => {
    const { document } = await grpcGetDocument(running.client, await token('alice'), DOCUMENT_ID);
    expect(document).toMatchObject({
      id: DOCUMENT_ID,
      metadata: { year: 2024, tags: ['planets'] },
    });
    expect(documents.get.mock.calls[0]?.[0]).toMatchObject({ tenantId: 't1', userId: 'alice' });

    const badId = await failure(
      grpcGetDocument(running.client, await token('alice'), 'not-a-uuid'),
    );
    expect(badId.code).toBe(status.INVALID_ARGUMENT);
    const missing = await failure(
      grpcGetDocument(running.client, await token('alice'), '00000000-0000-4000-8000-000000000000'),
    );
    expect(missing.code).toBe(status.NOT_FOUND);
    expect(missing.metadata.get(ERROR_CODE_METADATA)).toEqual(['document_not_found']);

    const withText = await grpcGetDocument(running.client, await token('alice'), DOCUMENT_ID, {
      includeText: true,
      textOffset: 50,
    });
    expect(documents.text).toHaveBeenLastCalledWith(expect.anything(), DOCUMENT_ID, {
      offset: 50,
      limit: 20_000,
    });
    expect(withText.text).toMatchObject({
      version: 2,
      offset: 50,
      nextOffset: 20_050,
      headings: [{ start: 0, level: 1, text: 'Saturn' }],
    });
    expect(document).toBeDefined();
    const tooLong = await failure(
      grpcGetDocument(running.client, await token('alice'), DOCUMENT_ID, {
        includeText: true,
        textLimit: 300_000,
      }),
    );
    expect(tooLong.code).toBe(status.INVALID_ARGUMENT);

    const page = await grpcListDocuments(running.client, await token('alice'), { pageSize: 0 });
    expect(documents.list).toHaveBeenLastCalledWith(expect.anything(), 100, undefined, {
      where: undefined,
      knowledgeBaseId: undefined,
    });
    expect(page).toMatchObject({ nextPageToken: 'next-page', documents: [{ id: DOCUMENT_ID }] });
    // The filter and the knowledge base go to document-service, which checks the filter.
    await grpcListDocuments(running.client, await token('alice'), {
      pageSize: 1000,
      filterJson: '{"status":"indexed"}',
      knowledgeBaseId: 'handbook',
    });
    expect(documents.list).toHaveBeenLastCalledWith(expect.anything(), 1000, undefined, {
      where: '{"status":"indexed"}',
      knowledgeBaseId: 'handbook',
    });
    const tooMany = await failure(
      grpcListDocuments(running.client, await token('alice'), { pageSize: 1001 }),
    );
    expect(tooMany.code).toBe(status.INVALID_ARGUMENT);
  });
});

describe('GetDocumentContent over the Nest gRPC transport', () => {
  const documents = {
    openContent: jest.fn(async (_caller: Caller, id: string) => {
      if (id !== DOCUMENT_ID) {
        throw DocumentServiceError.relayed(404, 'document_not_found', `document ${id} not found`);
      }
      return {
        contentType: 'application/pdf',
        sizeBytes: ORIGINAL.length,
        sha256: 'cd'.repeat(32),
        filename: 'saturn.pdf',
        body: (async function* () {
          yield ORIGINAL.subarray(0, 100_000);
          yield ORIGINAL.subarray(100_000);
        })(),
      };
    }),
  };
  let running: Awaited<ReturnType<typeof boot>>;
  beforeAll(async () => {
    running = await boot(new FakeSearch(), documents);
  });
  afterAll(async () => {
    running.client.close();
    await running.app.close();
  });

  it('streams the original in messages of at most 64 KiB, named by the first one', async () => {
    const messages = await grpcGetDocumentContent(
      running.client,
      await token('alice'),
      DOCUMENT_ID,
    );
    expect(messages.length).toBe(3); // 65536 + 34464 from the first part, 50000 from the second
    for (const message of messages) expect(message.data.length).toBeLessThanOrEqual(64 * 1024);
    expect(Buffer.concat(messages.map((m) => m.data)).equals(ORIGINAL)).toBe(true);
    expect(messages[0]).toMatchObject({
      contentType: 'application/pdf',
      sizeBytes: 150_000,
      sha256: 'cd'.repeat(32),
      filename: 'saturn.pdf',
    });
    expect(messages[1]).toMatchObject({ contentType: '', sizeBytes: 0 });
    expect(documents.openContent.mock.calls[0]?.[0]).toMatchObject({ userId: 'alice' });
  });

  it('answers NOT_FOUND with its code for a document the caller may not read', async () => {
    const missing = await failure(
      grpcGetDocumentContent(
        running.client,
        await token('alice'),
        '00000000-0000-4000-8000-000000000000',
      ),
    );
    expect(missing.code).toBe(status.NOT_FOUND);
    expect(missing.metadata.get(ERROR_CODE_METADATA)).toEqual(['document_not_found']);
  });
});

describe('shutdown of the gRPC transport', () => {
  it('lets an in-flight call finish before the app closes', async () => {
    const search = new FakeSearch();
    let release: () => void = () => undefined;
    let started: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    search.answer = () => {
      started();
      return new Promise((resolve) => (release = () => resolve(response())));
    };
    const { app, client } = await boot(search, {});
    const call = grpcSearch(client, await token('alice'), { query: 'slow' });
    await inFlight;
    const closed = app.close();
    // Long enough for Nest to reach the transport's shutdown; a forced one would cancel the call.
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    await expect(call).resolves.toMatchObject({ hits: [{ documentId: DOCUMENT_ID }] });
    client.close();
    await closed;
  });
});
