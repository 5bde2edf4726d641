import { type Access, type AccessPolicy, type Caller, mintToken, TokenVerifier } from '@kb/auth';
import {
  type ExtractedText,
  extractedTextBodyKey,
  extractedTextIndexKey,
  extractedTextKey,
  textLayoutOf,
  Topics,
  toTenantId,
} from '@kb/contracts';
import {
  ACCESS_POLICY,
  FlexibleRateLimiter,
  RATE_LIMITER,
  TOKEN_VERIFIER,
  useRestDefaults,
} from '@kb/http';
import { type ByteRange, putJson } from '@kb/storage';
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
          useValue: new DocumentContentService(f.documentsRepository, f.blobs, f.audit, {
            legacyMaxBytes: 4096,
          }),
        },
        { provide: TOKEN_VERIFIER, useValue: verifier },
        { provide: ACCESS_POLICY, useValue: policy },
        // `carol` has three reads a window; nobody else is limited here.
        {
          provide: RATE_LIMITER,
          useValue: {
            limiter: new FlexibleRateLimiter(
              { windowSeconds: 60, buckets: { read: { principal: 3, tenant: 0 } } },
              null,
            ),
            async consume(bucket: 'read', caller: { tenantId: string; userId: string }) {
              if (caller.userId === 'carol') await this.limiter.consume(bucket, caller);
            },
          },
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

  describe('a text stored in windows (review N6)', () => {
    const TEXT = Array.from({ length: 400 }, (_, i) => `Line ${i}: the tide turns, é 😀.\n`).join(
      '',
    );
    let windowed: string;
    /** What the store was asked for: whole objects and ranges, by key. */
    const reads: Array<{ key: string; range?: ByteRange }> = [];

    beforeAll(async () => {
      const document = await f.documents.upload(
        TENANT,
        newAccess(),
        files.file(TEXT, 'long.txt', 'text/plain'),
        {},
      );
      windowed = document.id;
      const { body, index } = textLayoutOf(
        {
          documentId: windowed,
          version: 1,
          format: 'text',
          text: TEXT,
          pages: [{ page: 1, start: 0, end: TEXT.length }],
          headings: [],
        },
        1024,
      );
      await f.blobs.put(extractedTextBodyKey(TENANT, windowed, 1), body);
      await putJson(f.blobs, extractedTextIndexKey(TENANT, windowed, 1), index);
      const { get, openRead } = f.blobs;
      // (The in-memory store's openRead reads through its own get: not a second read.)
      let opening = false;
      f.blobs.get = async (key) => {
        if (!opening) reads.push({ key });
        return get.call(f.blobs, key);
      };
      f.blobs.openRead = async (key, range) => {
        reads.push({ key, ...(range ? { range } : {}) });
        opening = true;
        try {
          return await openRead.call(f.blobs, key, range);
        } finally {
          opening = false;
        }
      };
    });

    it('serves any window from a byte range of the text, never the whole of it', async () => {
      for (const [offset, limit] of [
        [0, 10],
        [5000, 3000],
        [TEXT.length - 7, 100],
        [1023, 2],
      ] as const) {
        reads.length = 0;
        const response = await get(
          `/v1/documents/${windowed}/text?offset=${offset}&limit=${limit}`,
        );
        expect(response.status).toBe(200);
        const end = Math.min(offset + limit, TEXT.length);
        expect(await response.json()).toMatchObject({
          length: TEXT.length,
          offset,
          text: TEXT.slice(offset, end),
          nextOffset: end < TEXT.length ? end : null,
          pages: [{ page: 1, start: 0, end: TEXT.length }],
        });
        const ofText = reads.filter((r) => r.key === extractedTextBodyKey(TENANT, windowed, 1));
        expect(ofText).toHaveLength(1);
        // At most a block (1024 units, up to 4 bytes each) either side of the window.
        const { start, end: last } = ofText[0]!.range!;
        expect(last - start + 1).toBeLessThanOrEqual((end - offset + 2 * 1024) * 4);
        expect(reads.some((r) => r.key.endsWith('/text.json'))).toBe(false);
      }
    });

    it('answers a window past the end with no text and reads none', async () => {
      reads.length = 0;
      const response = await get(`/v1/documents/${windowed}/text?offset=${TEXT.length + 5}`);
      expect(await response.json()).toMatchObject({
        offset: TEXT.length,
        text: '',
        nextOffset: null,
      });
      expect(reads.filter((r) => r.key.endsWith('/text.txt'))).toEqual([]);
    });

    it('still reads a text stored whole before, and refuses one over the bound (409 text_too_large)', async () => {
      // `id` has a text.json only (beforeAll of the suite): read whole, as before.
      const old = await get(`/v1/documents/${id}/text?offset=2&limit=5`);
      expect(await old.json()).toMatchObject({ text: ORIGINAL.slice(2, 7), format: 'markdown' });
      const big = await f.documents.upload(TENANT, newAccess(), files.file('big one'), {});
      await putJson(f.blobs, extractedTextKey(TENANT, big.id, 1), {
        documentId: big.id,
        version: 1,
        format: 'text',
        text: 'x'.repeat(5000),
        pages: [],
        headings: [],
      });
      const refused = await get(`/v1/documents/${big.id}/text?limit=10`);
      expect(refused.status).toBe(409);
      expect(await refused.json()).toEqual({
        error: {
          code: 'text_too_large',
          message: expect.stringMatching(
            /over the 4096 bytes read at once; upload the content again/,
          ),
        },
      });
    });
  });

  it('draws reads of the text and the original on the read budget (429 rate_limited)', async () => {
    const statuses: number[] = [];
    for (const path of ['text', 'content', 'text', 'content']) {
      statuses.push((await get(`/v1/documents/${id}/${path}`, {}, 'carol')).status);
    }
    // carol may not read the document, but each call still spends a read.
    expect(statuses).toEqual([404, 404, 404, 429]);
    const limited = await get(`/v1/documents/${id}/text`, {}, 'carol');
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await limited.json()).toMatchObject({ error: { code: 'rate_limited' } });
  });

  it('audits each text and content read it served, as document_read', async () => {
    const before = f.outbox.envelopes(Topics.audit).length;
    await (await get(`/v1/documents/${id}/text?limit=3`)).json();
    await (await get(`/v1/documents/${id}/content`, { range: 'bytes=0-1' })).text();
    expect(
      f.outbox
        .envelopes(Topics.audit)
        .slice(before)
        .map((e) => [e.payload.action, e.payload.detail]),
    ).toEqual([
      ['document_read', '{"version":1,"part":"text","offset":0,"length":3}'],
      ['document_read', '{"version":1,"part":"content","range":"0-1"}'],
    ]);
  });
});
