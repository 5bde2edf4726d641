import { randomUUID } from 'node:crypto';

import {
  type ExtractedText,
  extractedTextBodyKey,
  extractedTextIndexKey,
  extractedTextKey,
  textLayoutOf,
} from '@kb/contracts';
import { type ByteRange, putJson, type S3BlobStore, s3BlobStoreFromEnv } from '@kb/storage';

import { DocumentContentService } from '../src/document-content/document-content.service';
import {
  documentServiceFixture,
  newAccess,
  spool,
  TENANT,
} from '../src/testing/document-service.fixture';

jest.setTimeout(60_000);

/**
 * Review N6 against the S3-compatible server of `npm run infra:up`: a window of a large extracted
 * text is one range read of its UTF-8 object, never the whole of it; a text stored whole before
 * that is still read, within its bound.
 */
describe('GET /v1/documents/:id/text over S3', () => {
  const f = documentServiceFixture();
  const files = spool();
  const alice = newAccess();
  let s3: S3BlobStore;
  let content: DocumentContentService;
  /** Every object read and the bytes asked for. */
  const reads: Array<{ key: string; range?: ByteRange }> = [];
  // About 6 MB of text with multi-byte characters and surrogate pairs.
  const TEXT = Array.from(
    { length: 60_000 },
    (_, i) => `Paragraph ${i}: Zürich, 東京 and 😀 at high tide.\n`,
  ).join('');

  beforeAll(async () => {
    s3 = s3BlobStoreFromEnv({
      S3_ENDPOINT: process.env['S3_ENDPOINT'],
      S3_REGION: process.env['S3_REGION'] ?? 'us-east-1',
      S3_BUCKET: `kb-text-${randomUUID().slice(0, 8)}`,
      S3_ACCESS_KEY_ID: process.env['S3_ACCESS_KEY_ID'],
      S3_SECRET_ACCESS_KEY: process.env['S3_SECRET_ACCESS_KEY'],
    });
    await s3.ensureBucket();
    const { get, openRead } = s3;
    s3.get = async (key) => {
      reads.push({ key });
      return get.call(s3, key);
    };
    s3.openRead = async (key, range) => {
      reads.push({ key, ...(range ? { range } : {}) });
      return openRead.call(s3, key, range);
    };
    content = new DocumentContentService(f.documentsRepository, s3, f.audit, {
      legacyMaxBytes: 1024 * 1024,
    });
  });
  afterAll(() => {
    s3.destroy();
    files.cleanup();
  });

  /** A document whose version 1 text is stored as parser-service stores it. */
  async function windowedDocument(text: string): Promise<string> {
    const document = await f.documents.upload(TENANT, alice, files.file(randomUUID()), {});
    const { body, index } = textLayoutOf({
      documentId: document.id,
      version: 1,
      format: 'text',
      text,
      pages: [],
      headings: [{ start: 0, level: 1, text: 'Tides' }],
    });
    await s3.put(extractedTextBodyKey(TENANT, document.id, 1), body, 'text/plain; charset=utf-8');
    await putJson(s3, extractedTextIndexKey(TENANT, document.id, 1), index);
    return document.id;
  }

  it('reads each window as one range of the text object, a block or so either side', async () => {
    const id = await windowedDocument(TEXT);
    const bodyKey = extractedTextBodyKey(TENANT, id, 1);
    for (const [offset, limit] of [
      [0, 1],
      [1_234_567, 20_000],
      [TEXT.length - 10, 200_000],
      [2_000_000, 200_000],
    ] as const) {
      reads.length = 0;
      const window = await content.text(TENANT, alice, id, { offset, limit });
      const end = Math.min(offset + limit, TEXT.length);
      expect(window).toMatchObject({
        length: TEXT.length,
        offset,
        nextOffset: end < TEXT.length ? end : null,
        headings: [{ start: 0, level: 1, text: 'Tides' }],
      });
      expect(window.text).toBe(TEXT.slice(offset, end));
      const ofText = reads.filter((r) => r.key === bodyKey);
      expect(ofText).toHaveLength(1);
      const { start, end: last } = ofText[0]!.range!;
      // The window's bytes (at most 4 a code unit) and at most two 16 Ki-unit blocks more.
      expect(last - start + 1).toBeLessThanOrEqual((end - offset + 2 * 16_384) * 4);
    }
  });

  it('still reads a text.json stored before, and refuses one over the bound with 409 text_too_large', async () => {
    const small = await f.documents.upload(TENANT, alice, files.file('legacy small'), {});
    const extracted = (id: string, text: string): ExtractedText => ({
      documentId: id,
      version: 1,
      format: 'text',
      text,
      pages: [],
      headings: [],
    });
    await putJson(s3, extractedTextKey(TENANT, small.id, 1), extracted(small.id, 'old text'));
    expect(await content.text(TENANT, alice, small.id, { offset: 4, limit: 10 })).toMatchObject({
      text: 'text',
      length: 8,
      nextOffset: null,
    });
    const big = await f.documents.upload(TENANT, alice, files.file('legacy big'), {});
    await putJson(s3, extractedTextKey(TENANT, big.id, 1), extracted(big.id, TEXT));
    await expect(
      content.text(TENANT, alice, big.id, { offset: 0, limit: 10 }),
    ).rejects.toMatchObject({ code: 'text_too_large' });
  });
});
