import { type Access, type AccessPolicy, type Caller, mintToken, TokenVerifier } from '@kb/auth';
import { type ExtractedText, extractedTextKey, toTenantId } from '@kb/contracts';
import { ACCESS_POLICY, TOKEN_VERIFIER, useRestDefaults } from '@kb/http';
import { putJson } from '@kb/storage';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import {
  documentServiceFixture,
  newAccess,
  spool,
  TENANT,
} from '../testing/document-service.fixture';
import { DocumentContentController } from './document-content.controller';
import { DocumentContentService } from './document-content.service';

const SECRET = 'a-test-secret-of-at-least-thirty-two-chars';
const ORIGINAL = '# Tides\n\nThe moon pulls the water. Spring tides are the highest.\n';

/** Everyone reads what grants them; nobody here is an admin. */
const policy: AccessPolicy = {
  async accessOf(caller: Caller): Promise<Access> {
    return newAccess({ userId: caller.userId, tenantId: toTenantId(caller.tenantId) });
  },
  async authorize() {},
};

/** The original and the extracted text over HTTP: headers, ranges, paging and the ACL's 404. */
describe('GET /v1/documents/:id/content and /text', () => {
  const f = documentServiceFixture();
  const files = spool();
  let app: INestApplication;
  let url: string;
  let id: string;
  let sha256: string;

  const get = async (path: string, headers: Record<string, string> = {}, user = 'alice') =>
    fetch(`${url}${path}`, {
      headers: {
        authorization: `Bearer ${await mintToken({ tenant: TENANT, user }, SECRET)}`,
        ...headers,
      },
    });

  beforeAll(async () => {
    const document = await f.documents.upload(
      TENANT,
      newAccess(),
      files.file(ORIGINAL, 'tides.md', 'text/markdown'),
      {},
    );
    ({ id, sha256 } = document);
    const extracted: ExtractedText = {
      documentId: id,
      version: 1,
      format: 'markdown',
      text: ORIGINAL,
      pages: [],
      headings: [{ start: 0, level: 1, text: 'Tides' }],
    };
    await putJson(f.blobs, extractedTextKey(TENANT, id, 1), extracted);
    const verifier = new TokenVerifier({ secret: SECRET });
    const moduleRef = await Test.createTestingModule({
      controllers: [DocumentContentController],
      providers: [
        {
          provide: DocumentContentService,
          useValue: new DocumentContentService(f.documentsRepository, f.blobs),
        },
        { provide: TOKEN_VERIFIER, useValue: verifier },
        { provide: ACCESS_POLICY, useValue: policy },
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    useRestDefaults(app, verifier);
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterAll(async () => {
    await app.close();
    files.cleanup();
  });

  it('streams the original with its type, length, entity tag and safe headers', async () => {
    const response = await get(`/v1/documents/${id}/content`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(ORIGINAL);
    expect(response.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(ORIGINAL)));
    expect(response.headers.get('etag')).toBe(`"${sha256}"`);
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-disposition')).toBe("inline; filename*=UTF-8''tides.md");
  });

  it('answers a byte range with 206, and one past the end with 416', async () => {
    const size = Buffer.byteLength(ORIGINAL);
    const partial = await get(`/v1/documents/${id}/content`, { range: 'bytes=2-6' });
    expect(partial.status).toBe(206);
    expect(await partial.text()).toBe(ORIGINAL.slice(2, 7));
    expect(partial.headers.get('content-range')).toBe(`bytes 2-6/${size}`);
    expect(partial.headers.get('content-length')).toBe('5');
    const suffix = await get(`/v1/documents/${id}/content`, { range: 'bytes=-3' });
    expect(await suffix.text()).toBe(ORIGINAL.slice(-3));
    const beyond = await get(`/v1/documents/${id}/content`, { range: `bytes=${size}-` });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${size}`);
    // A stale If-Range: the whole, current content instead of a range of it.
    const stale = await get(`/v1/documents/${id}/content`, {
      range: 'bytes=0-1',
      'if-range': '"0000"',
    });
    expect(stale.status).toBe(200);
    expect(await stale.text()).toBe(ORIGINAL);
  });

  it('pages through the extracted text with the heading map and the next offset', async () => {
    const first = await get(`/v1/documents/${id}/text?limit=10`);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({
      documentId: id,
      version: 1,
      format: 'markdown',
      length: ORIGINAL.length,
      offset: 0,
      text: ORIGINAL.slice(0, 10),
      nextOffset: 10,
      headings: [{ start: 0, level: 1, text: 'Tides' }],
      pages: [],
    });
    const last = (await (await get(`/v1/documents/${id}/text?offset=60&limit=1000`)).json()) as {
      text: string;
      nextOffset: number | null;
    };
    expect(last).toMatchObject({ text: ORIGINAL.slice(60), nextOffset: null });
    const bad = await get(`/v1/documents/${id}/text?limit=0`);
    expect(bad.status).toBe(400);
    const future = await get(`/v1/documents/${id}/text?version=2`);
    expect(future.status).toBe(404);
    expect(await future.json()).toMatchObject({ error: { code: 'document_version_not_found' } });
  });

  it('answers 404 to a caller who may not read the document, for the original and the text', async () => {
    for (const path of [`/v1/documents/${id}/content`, `/v1/documents/${id}/text`]) {
      const response = await get(path, {}, 'mallory');
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ error: { code: 'document_not_found' } });
    }
  });

  it('says when a version has no extracted text yet (409 text_not_available)', async () => {
    const pending = await f.documents.upload(TENANT, newAccess(), files.file('other'), {});
    const response = await get(`/v1/documents/${pending.id}/text`);
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({
      error: { code: 'text_not_available', message: expect.stringMatching(/not parsed yet/) },
    });
  });
});
