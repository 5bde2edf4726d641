import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  type Access,
  type AccessPolicy,
  AuthError,
  AuthErrorCode,
  type Caller,
  mintToken,
  type Permission,
  TokenVerifier,
} from '@kb/auth';
import {
  ACCESS_POLICY,
  FlexibleRateLimiter,
  RATE_LIMITER,
  TOKEN_VERIFIER,
  useRestDefaults,
} from '@kb/http';
import { S3BlobStore } from '@kb/storage';
import type { INestApplication } from '@nestjs/common';
import { MulterModule } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';

import { DOCUMENT_CONFIG } from '../config/document.config';
import { SourcesRepository } from '../sources/sources.repository';
import { SourcesService } from '../sources/sources.service';
import { documentServiceFixture, newAccess, TENANT } from '../testing/document-service.fixture';
import { DocumentReads } from './document-reads.service';
import { DocumentsController } from './documents.controller';
import { DocumentsService } from './documents.service';
import { uploadOptions } from './upload.options';

const SECRET = 'a-test-secret-of-at-least-thirty-two-chars';

/** `bob` only reads; everyone else may write. Decided as ResolverAccessPolicy does. */
const accessOf = (caller: Caller): Access =>
  newAccess({
    userId: caller.userId,
    ...(caller.userId === 'bob' ? { documentActions: new Set(['read'] as const) } : {}),
  });
const policy: AccessPolicy = {
  async accessOf(caller) {
    return accessOf(caller);
  },
  async authorize(caller: Caller, { action, resource }: Permission) {
    if (!accessOf(caller).documentActions.has(action)) {
      throw new AuthError(
        AuthErrorCode.PermissionDenied,
        `${action} on ${resource} is not granted to ${caller.userId}`,
      );
    }
  },
};

/** The upload route over HTTP, with the real multer limits and a spool folder of its own. */
describe('uploads through POST /v1/documents', () => {
  let app: INestApplication;
  let url: string;
  const spool = mkdtempSync(join(tmpdir(), 'kb-upload-spec-'));
  const f = documentServiceFixture();
  // Two sources of t1: a folder source (synced by the CLI over this API) and an S3 one.
  const FOLDER_SOURCE = 'f01de700-0000-4000-8000-000000000001';
  const S3_SOURCE = '53000000-0000-4000-8000-000000000002';
  const kinds = new Map(Object.entries({ [FOLDER_SOURCE]: 'folder', [S3_SOURCE]: 's3' }));
  const sources = new SourcesService(
    {
      find: async (_tenant: string, id: string) =>
        kinds.has(id) ? { id, kind: kinds.get(id) } : undefined,
    } as unknown as SourcesRepository,
    undefined as never,
    undefined as never,
    { S3_BUCKET: 'kb-documents', SOURCE_ALLOWLIST: {} },
    undefined as never,
    () => f.now,
  );
  const upload = async (user: string, fields: Record<string, string>, content = 'x') => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', new Blob([content.repeat(64 * 1024)]), 'notes.txt');
    return fetch(`${url}/v1/documents`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${await mintToken({ tenant: 't1', user }, SECRET)}` },
    });
  };

  beforeAll(async () => {
    const verifier = new TokenVerifier({ secret: SECRET });
    const moduleRef = await Test.createTestingModule({
      imports: [
        MulterModule.register(uploadOptions({ UPLOAD_TMP_DIR: spool, MAX_UPLOAD_BYTES: 1 << 20 })),
      ],
      controllers: [DocumentsController],
      providers: [
        { provide: DocumentsService, useValue: f.documents },
        { provide: DocumentReads, useValue: f.reads },
        { provide: SourcesService, useValue: sources },
        { provide: TOKEN_VERIFIER, useValue: verifier },
        { provide: DOCUMENT_CONFIG, useValue: { UPLOAD_TMP_DIR: spool } },
        { provide: ACCESS_POLICY, useValue: policy },
        // Five uploads per caller: `carol` spends hers below.
        {
          provide: RATE_LIMITER,
          useValue: new FlexibleRateLimiter(
            {
              windowSeconds: 60,
              buckets: { upload: { principal: 5, tenant: 0 }, read: { principal: 5, tenant: 0 } },
            },
            null,
          ),
        },
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    useRestDefaults(app, verifier);
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterAll(async () => {
    await app.close();
    rmSync(spool, { recursive: true, force: true });
  });

  it('refuses a reader with 403 before the file is spooled to disk', async () => {
    const spooled: string[] = [];
    const watch = setInterval(() => spooled.push(...readdirSync(spool)), 1);
    const response = await upload('bob', { title: 'Notes' });
    clearInterval(watch);
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      error: { code: 'permission_denied', message: 'write on documents is not granted to bob' },
    });
    expect(spooled).toEqual([]);
  });

  it('accepts a writer, and leaves no spooled file behind', async () => {
    const response = await upload('alice', { title: 'Notes', tags: '["docs"]' });
    expect(response.status).toBe(202);
    expect(readdirSync(spool)).toEqual([]);
  });

  it('answers 400 for too many fields or a field over 256 KiB, before the handler', async () => {
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}`, 'v']));
    const crowded = await upload('alice', many);
    expect(crowded.status).toBe(400);
    expect(await crowded.json()).toMatchObject({ error: { code: 'bad_request' } });
    const huge = await upload('alice', { title: 'x'.repeat(300 * 1024) });
    expect(huge.status).toBe(400);
    expect(readdirSync(spool)).toEqual([]);
  });

  it('answers 503 dependency_unavailable with Retry-After while S3 is away, not 500', async () => {
    // The error the real S3 client raises when nothing listens at its endpoint.
    const away = new S3BlobStore({
      endpoint: 'http://127.0.0.1:1',
      region: 'us-east-1',
      bucket: 'kb-documents',
      accessKeyId: 'test',
      secretAccessKey: 'test',
    });
    const refused: unknown = await away.exists('blobs/x').catch((error: unknown) => error);
    away.destroy();
    expect(refused).toBeInstanceOf(Error);
    const put = jest.spyOn(f.blobs, 'put').mockRejectedValueOnce(refused);
    try {
      const response = await upload('alice', { title: 'Notes' }, 'y');
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(await response.json()).toEqual({
        error: { code: 'dependency_unavailable', message: expect.any(String) },
      });
      expect(readdirSync(spool)).toEqual([]);
    } finally {
      put.mockRestore();
    }
  });

  it('answers 429 with Retry-After once a caller spent the upload budget, before spooling', async () => {
    // The same content each time: 202, then 200 for the duplicates.
    for (let i = 0; i < 5; i++) expect([200, 202]).toContain((await upload('carol', {})).status);
    const spooled: string[] = [];
    const watch = setInterval(() => spooled.push(...readdirSync(spool)), 1);
    const limited = await upload('carol', {});
    clearInterval(watch);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await limited.json()).toMatchObject({ error: { code: 'rate_limited' } });
    expect(spooled).toEqual([]);
  });
  it('answers 400 naming a multipart part the API does not know, and stores nothing', async () => {
    const before = (await f.documents.list(TENANT, newAccess(), 100)).items.length;
    const response = await upload('alice', { knowledgeBaseID: '["default"]' }, 'k');
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('invalid_argument');
    expect(body.error.message).toContain('knowledgeBaseID');
    expect((await f.documents.list(TENANT, newAccess(), 100)).items).toHaveLength(before);
    expect(readdirSync(spool)).toEqual([]);
  });

  it('still takes the deprecated knowledge_base_ids, and says so in Deprecation and Sunset', async () => {
    // Uploads of users of their own: each caller has five (the budget above).
    const old = await upload('dave', { knowledge_base_ids: '["default"]' }, 'o');
    expect(old.status).toBe(202);
    expect(old.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(old.headers.get('sunset')).toContain('2027');
    expect(await old.json()).toMatchObject({ explicitKnowledgeBaseIds: ['default'] });
    const current = await upload('dave', { knowledgeBaseIds: '["default"]' }, 'n');
    expect(current.status).toBe(202);
    expect(current.headers.get('deprecation')).toBeNull();
  });

  it('takes a JSON body with text or markdown, and makes the same externalId a new version', async () => {
    const post = async (body: unknown, user = 'erin') =>
      fetch(`${url}/v1/documents`, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${await mintToken({ tenant: 't1', user }, SECRET)}`,
        },
      });
    const first = await post({ markdown: '# Title\n\nbody', title: 'Guide', externalId: 'g/1.md' });
    expect(first.status).toBe(202);
    const created = (await first.json()) as { id: string; contentType: string; version: number };
    expect(created).toMatchObject({ contentType: 'text/markdown', version: 1, title: 'Guide' });
    const second = await post({ markdown: '# Title\n\nnew body', externalId: 'g/1.md' });
    expect(second.status).toBe(202);
    expect(await second.json()).toMatchObject({ id: created.id, version: 2 });
    const again = await post({ markdown: '# Title\n\nnew body', externalId: 'g/1.md' });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id: created.id, version: 2, unchanged: true });
    const both = await post({ text: 'a', markdown: 'b' }, 'fred');
    expect(both.status).toBe(400);
    const unknown = await post({ text: 'a', knowledge_bases: ['x'] }, 'fred');
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(await unknown.json())).toContain('knowledge_bases');
    expect(readdirSync(spool)).toEqual([]);
  });

  const postJson = async (body: unknown, user: string) =>
    fetch(`${url}/v1/documents`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await mintToken({ tenant: 't1', user }, SECRET)}`,
      },
    });
  const getAs = async (path: string, user: string) =>
    fetch(`${url}${path}`, {
      headers: { authorization: `Bearer ${await mintToken({ tenant: 't1', user }, SECRET)}` },
    });

  it('reserves source: external ids for source syncs: 400 external_id_reserved (N13)', async () => {
    const before = (await f.documents.list(TENANT, newAccess({ isAdmin: true }), 1000)).items;
    const json = await postJson({ text: 'planted', externalId: 'source:s1/guide.md' }, 'ivan');
    expect(json.status).toBe(400);
    expect(await json.json()).toEqual({
      error: {
        code: 'external_id_reserved',
        message: 'external ids starting "source:" are reserved for source syncs',
      },
    });
    const multipart = await upload('ivan', { externalId: 'source:s1/other.md' }, 'p');
    expect(multipart.status).toBe(400);
    expect(await multipart.json()).toMatchObject({ error: { code: 'external_id_reserved' } });
    expect((await f.documents.list(TENANT, newAccess({ isAdmin: true }), 1000)).items).toEqual(
      before,
    );
    expect(readdirSync(spool)).toEqual([]);
  });

  it("lets a caller write a folder source's source: ids (the CLI syncs it), never an S3 source's", async () => {
    const folder = await postJson(
      { text: 'from the folder', externalId: `source:${FOLDER_SOURCE}/notes/a.md` },
      'oscar',
    );
    expect(folder.status).toBe(202);
    const s3 = await postJson(
      { text: 'planted', externalId: `source:${S3_SOURCE}/notes/a.md` },
      'oscar',
    );
    expect(s3.status).toBe(400);
    expect(await s3.json()).toMatchObject({ error: { code: 'external_id_reserved' } });
    const multipart = await upload('oscar', { externalId: `source:${S3_SOURCE}/b.md` }, 'p');
    expect(multipart.status).toBe(400);
  });

  it('answers an external id held by a document the caller cannot read as unusable, not taken (N13)', async () => {
    expect((await postJson({ text: 'mine', externalId: 'ivan/private.md' }, 'ivan')).status).toBe(
      202,
    );
    const probe = await postJson({ text: 'probe', externalId: 'ivan/private.md' }, 'judy');
    expect(probe.status).toBe(400);
    expect(await probe.json()).toEqual({
      error: {
        code: 'invalid_external_id',
        message: 'external id "ivan/private.md" cannot be used; choose another',
      },
    });
  });

  it('pages ?externalIdPrefix= in external-id order, with a cursor (N6)', async () => {
    for (const name of ['c', 'a', 'b']) {
      expect((await postJson({ text: name, externalId: `kim/${name}.md` }, 'kim')).status).toBe(
        202,
      );
    }
    const first = await getAs('/v1/documents?externalIdPrefix=kim%2F&limit=2', 'kim');
    expect(first.status).toBe(200);
    const page = (await first.json()) as {
      items: Array<{ externalId: string }>;
      nextCursor: string;
    };
    expect(page.items.map((d) => d.externalId)).toEqual(['kim/a.md', 'kim/b.md']);
    expect(page.nextCursor).toEqual(expect.any(String));
    const second = (await (
      await getAs(`/v1/documents?externalIdPrefix=kim%2F&limit=2&cursor=${page.nextCursor}`, 'kim')
    ).json()) as { items: Array<{ externalId: string }>; nextCursor: string | null };
    expect(second).toMatchObject({ items: [{ externalId: 'kim/c.md' }], nextCursor: null });
    const withWhere = await getAs(
      `/v1/documents?externalIdPrefix=kim%2F&where=${encodeURIComponent('{"tags":"x"}')}`,
      'kim',
    );
    expect(withWhere.status).toBe(400);
    expect(await withWhere.json()).toMatchObject({
      error: {
        code: 'invalid_argument',
        message: 'where: where cannot be combined with externalIdPrefix',
      },
    });
    const badCursor = await getAs('/v1/documents?externalIdPrefix=kim%2F&cursor=bm9wZQ', 'kim');
    expect(badCursor.status).toBe(400);
    expect(await badCursor.json()).toEqual({
      error: { code: 'invalid_cursor', message: 'cursor is malformed' },
    });
  });

  it('draws listings on the read budget: 429 once a caller spent it (N6)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await getAs('/v1/documents?limit=1', 'lena')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });
});
