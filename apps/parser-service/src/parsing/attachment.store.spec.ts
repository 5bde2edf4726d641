import { createHash, randomUUID } from 'node:crypto';

import { DEFAULT_CHUNKER, type DocumentUploaded, pipelineOf, Topics } from '@kb/contracts';
import { MemoryBlobStore, MemoryEventProducer } from '@kb/testing';

import { TEST_LIMITS } from '../../test/fixtures/extraction.fixtures';
import { composeMail, PDF_HEAD } from '../../test/fixtures/mail.fixtures';
import { wordCounter } from '../chunking/token.counter';
import { attachmentKey, storeAttachments } from './attachment.store';
import { inProcessExtractor } from './in-process.extractor';
import { ParsingService } from './parsing.service';

const MODEL = 'all-MiniLM-L6-v2';
const pipeline = pipelineOf('t1', DEFAULT_CHUNKER, MODEL, {
  chunker: DEFAULT_CHUNKER,
  model: MODEL,
});

function setUp(maxAttachments = 20) {
  const blobs = new MemoryBlobStore();
  const producer = new MemoryEventProducer();
  const service = new ParsingService(
    blobs,
    producer,
    wordCounter,
    inProcessExtractor(TEST_LIMITS),
    {
      PARSER_MAX_INPUT_BYTES: 1024 * 1024,
      PARSER_MAX_ATTACHMENTS: maxAttachments,
    },
  );
  const upload = async (body: Buffer, attachedTo?: string): Promise<DocumentUploaded> => {
    const key = `blobs/t1/sha256/${randomUUID()}`;
    await blobs.put(key, body);
    return {
      documentId: randomUUID(),
      version: 2,
      filename: 'papers.eml',
      contentType: 'message/rfc822',
      sizeBytes: body.length,
      sha256: 'a'.repeat(64),
      blob: { bucket: blobs.bucket, key },
      title: 'papers.eml',
      metadata: {},
      attributes: {
        knowledgeBaseIds: ['kb'],
        tags: [],
        metadata: {},
        uploadedAt: 0,
        principals: [],
      },
      pipelines: [pipeline],
      ...(attachedTo ? { attachedTo } : {}),
    };
  };
  return { blobs, producer, service, upload };
}

const NOTES = '# Notes\n\nThe razorbill count.';
const mail = () =>
  composeMail([
    { filename: 'tides.pdf', content: PDF_HEAD, contentType: 'application/pdf' },
    { filename: 'logo.gif', content: Buffer.from('GIF89a', 'latin1'), contentType: 'image/gif' },
    { filename: 'notes.md', content: NOTES, contentType: 'text/markdown' },
  ]);

describe("a mail's attachments in the parser", () => {
  it("stores each under the mail's derived prefix and reports them on a parsing event", async () => {
    const { blobs, producer, service, upload } = setUp();
    const document = await upload(await mail());
    await service.parse('t1', document);
    const reports = producer
      .events(Topics.documentStatus)
      .filter((event) => event.payload.attachments);
    expect(reports).toHaveLength(1);
    const key = (index: number) => attachmentKey('t1', document.documentId, 2, index);
    expect(key(2)).toBe(`derived/t1/${document.documentId}/v2/attachments/2`);
    expect(reports[0]!.payload).toEqual({
      documentId: document.documentId,
      version: 2,
      status: 'parsing',
      attachments: {
        extracted: [
          {
            index: 0,
            filename: 'tides.pdf',
            contentType: 'application/pdf',
            sizeBytes: PDF_HEAD.length,
            sha256: createHash('sha256').update(PDF_HEAD).digest('hex'),
            blob: { bucket: blobs.bucket, key: key(0) },
          },
          {
            index: 2,
            filename: 'notes.md',
            contentType: 'text/markdown',
            sizeBytes: NOTES.length,
            sha256: createHash('sha256').update(NOTES).digest('hex'),
            blob: { bucket: blobs.bucket, key: key(2) },
          },
        ],
        skipped: [{ index: 1, filename: 'logo.gif', reason: 'unsupported_type' }],
      },
    });
    expect((await blobs.get(key(2))).toString()).toBe(NOTES);
    // The mail itself is still parsed as before.
    expect(producer.events(Topics.documentParsed)).toHaveLength(1);
  });

  it('reads no attachments of an attachment: nested mails go one level deep', async () => {
    const { blobs, producer, service, upload } = setUp();
    const document = await upload(await mail(), randomUUID());
    await service.parse('t1', document);
    expect(producer.events(Topics.documentStatus).some((e) => e.payload.attachments)).toBe(false);
    expect(blobs.keys().filter((k) => k.includes('/attachments/'))).toEqual([]);
  });

  it('reads none with PARSER_MAX_ATTACHMENTS 0', async () => {
    const { producer, service, upload } = setUp(0);
    await service.parse('t1', await upload(await mail()));
    expect(producer.events(Topics.documentStatus).some((e) => e.payload.attachments)).toBe(false);
  });

  it('names at most 1000 skipped attachments in one report', async () => {
    const skipped = Array.from({ length: 1500 }, (_, index) => ({
      index,
      filename: `${index}.gif`,
      reason: 'unsupported_type' as const,
    }));
    const report = await storeAttachments(
      new MemoryBlobStore(),
      't1',
      { documentId: randomUUID(), version: 1 },
      { files: [], skipped },
    );
    expect(report.skipped).toEqual(skipped.slice(0, 1000));
  });
});
