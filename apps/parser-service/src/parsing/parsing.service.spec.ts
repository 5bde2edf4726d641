import { randomUUID } from 'node:crypto';

import {
  type ChunkerConfig,
  DEFAULT_CHUNKER,
  type DocumentUploaded,
  extractedTextBodyKey,
  extractedTextIndexKey,
  extractedTextIndexSchema,
  parsedDocumentSchema,
  pipelineOf,
  type TopicEnvelope,
  Topics,
} from '@kb/contracts';
import { INLINE_PAYLOAD_MAX_BYTES, markFailedOnDeadLetter, PermanentError } from '@kb/kafka';
import { MemoryBlobStore, MemoryEventProducer } from '@kb/testing';
import { Document, HeadingLevel, Packer, Paragraph } from 'docx';

import { renderText } from '../../test/fixtures/ocr.fixtures';
import { lyingDocx } from '../../test/fixtures/zip.fixtures';
import { wordCounter } from '../chunking/token.counter';
import { inProcessExtractor } from './in-process.extractor';
import { ParsingService } from './parsing.service';

const GUIDE = [
  '# Tides',
  '',
  'Tides rise and fall twice a day. The moon pulls the water. '.repeat(4).trim(),
  '',
  '## Spring tides',
  '',
  'At new and full moon the sun and moon pull together. Spring tides are the highest.',
].join('\n');

const MODEL = 'all-MiniLM-L6-v2';
const DEFAULTS = { chunker: DEFAULT_CHUNKER, model: MODEL };
/** The pipeline document-service names for a knowledge base with this chunker and the default model. */
const pipelineWith = (chunker: ChunkerConfig) => pipelineOf('t1', chunker, MODEL, DEFAULTS);

/** The parser's bound on an original it reads into memory, in these specs. */
const MAX_INPUT_BYTES = 1024 * 1024;

function setUp() {
  const blobs = new MemoryBlobStore();
  const producer = new MemoryEventProducer();
  const service = new ParsingService(
    blobs,
    producer,
    wordCounter,
    inProcessExtractor({
      maxZipEntries: 100,
      maxInflatedBytes: 16 * 1024 * 1024,
      maxTextChars: 1_000_000,
      maxImagePixels: 40_000_000,
      maxOcrPages: 50,
    }),
    { PARSER_MAX_INPUT_BYTES: MAX_INPUT_BYTES, PARSER_MAX_ATTACHMENTS: 20 },
  );
  const upload = async (
    filename: string,
    body: Buffer | string,
    chunker: ChunkerConfig = DEFAULT_CHUNKER,
  ): Promise<DocumentUploaded> => {
    const key = `blobs/t1/sha256/${randomUUID()}`;
    await blobs.put(key, body);
    return {
      documentId: randomUUID(),
      version: 1,
      filename,
      contentType: 'application/octet-stream',
      sizeBytes: Buffer.byteLength(body),
      sha256: 'a'.repeat(64),
      blob: { bucket: blobs.bucket, key },
      title: filename,
      metadata: {},
      attributes: {
        knowledgeBaseIds: ['kb'],
        tags: [],
        metadata: {},
        uploadedAt: 0,
        principals: [],
      },
      pipelines: [pipelineWith(chunker)],
    };
  };
  return { blobs, producer, service, upload };
}

describe('ParsingService', () => {
  it('chunks with the chunker the event carries and sends small chunk lists in the event', async () => {
    const { blobs, producer, service, upload } = setUp();
    const document = await upload('tides.md', GUIDE, {
      strategy: 'markdown',
      size: 1000,
      overlap: 0,
      headingLevel: 2,
    });
    const parsed = await service.parse('t1', document);
    expect(parsed.chunks.map((c) => c.headingPath)).toEqual([['Tides'], ['Tides', 'Spring tides']]);
    const [event] = producer.events(Topics.documentParsed);
    expect(event!.payload.chunks).toEqual({ inline: parsed });
    // Nothing to fetch back: no claim-check object was written.
    expect(blobs.keys().filter((k) => k.includes('/chunks.'))).toEqual([]);
    expect(producer.messages.map((m) => m.topic)).toEqual([
      'kb.document.status.v1',
      'kb.document.parsed.v1',
    ]);
    expect(producer.events(Topics.documentStatus).map((e) => e.payload.status)).toEqual([
      'parsing',
    ]);
  });

  it('stores a chunk list larger than an event may carry and sends its key', async () => {
    const { blobs, producer, service, upload } = setUp();
    const paragraph = 'The moon pulls the water twice a day, and the sea follows it. ';
    const text = Array.from({ length: 40 }, (_, i) => `# Part ${i}\n\n${paragraph.repeat(120)}`);
    const document = await upload('long.md', text.join('\n\n'));
    const parsed = await service.parse('t1', document);
    expect(Buffer.byteLength(JSON.stringify(parsed))).toBeGreaterThan(INLINE_PAYLOAD_MAX_BYTES);
    const [event] = producer.events(Topics.documentParsed);
    const [pipeline] = document.pipelines;
    const key = `derived/t1/${document.documentId}/v1/chunks.${pipeline!.key}.json`;
    expect(event!.payload.chunks).toEqual({ bucket: blobs.bucket, key });
    const stored = parsedDocumentSchema.parse(JSON.parse((await blobs.get(key)).toString()));
    expect(stored).toEqual(parsed);
  });

  it('stores the extracted text once per version, with the headings every chunk offset points into', async () => {
    const { blobs, service, upload } = setUp();
    const document = await upload('tides.md', GUIDE);
    const parsed = await service.parse('t1', document);
    // As UTF-8 plus an index of blocks (review N6), no longer one text.json.
    const index = extractedTextIndexSchema.parse(
      JSON.parse((await blobs.get(extractedTextIndexKey('t1', document.documentId, 1))).toString()),
    );
    const stored = {
      ...index,
      text: (await blobs.get(extractedTextBodyKey('t1', document.documentId, 1))).toString('utf8'),
    };
    expect(blobs.contentTypeOf(extractedTextBodyKey('t1', document.documentId, 1))).toBe(
      'text/plain; charset=utf-8',
    );
    expect(await blobs.exists(`derived/t1/${document.documentId}/v1/text.json`)).toBe(false);
    expect(stored).toMatchObject({
      documentId: document.documentId,
      version: 1,
      format: 'markdown',
      length: GUIDE.length,
    });
    expect(index.blocks.at(-1)).toEqual([GUIDE.length, Buffer.byteLength(GUIDE)]);
    expect(stored.text).toBe(GUIDE);
    expect(stored.pages).toEqual([]);
    expect(stored.headings).toEqual([
      { start: 0, level: 1, text: 'Tides' },
      { start: GUIDE.indexOf('## Spring'), level: 2, text: 'Spring tides' },
    ]);
    for (const chunk of parsed.chunks) {
      expect(stored.text.slice(chunk.start, chunk.end)).toBe(chunk.text);
    }
  });

  it('chunks with a recursive pipeline within its size, heading paths kept', async () => {
    const { service, upload } = setUp();
    const document = await upload('tides.md', GUIDE, {
      strategy: 'recursive',
      size: 120,
      overlap: 20,
    });
    const parsed = await service.parse('t1', document);
    expect(parsed.chunks.length).toBeGreaterThan(3);
    for (const chunk of parsed.chunks) expect(chunk.text.length).toBeLessThanOrEqual(120);
    expect(parsed.chunks[0]!.headingPath).toEqual(['Tides']);
  });

  it('reads heading paths from DOCX headings, and none from code comments', async () => {
    const { service, upload } = setUp();
    const docx = await Packer.toBuffer(
      new Document({
        sections: [
          {
            children: [
              new Paragraph({ text: 'Lighthouses', heading: HeadingLevel.HEADING_1 }),
              new Paragraph('Keepers trimmed the wicks every night.'),
              new Paragraph({ text: 'Fog signals', heading: HeadingLevel.HEADING_2 }),
              new Paragraph('Horns sounded twice a minute.'),
            ],
          },
        ],
      }),
    );
    const fromDocx = await service.parse(
      't1',
      await upload('lights.docx', docx, { strategy: 'paragraph', size: 100 }),
    );
    expect(fromDocx.chunks.map((c) => c.headingPath)).toEqual([
      ['Lighthouses'],
      ['Lighthouses', 'Fog signals'],
    ]);
    const code = '# a comment, not a heading\nprint("hi")\n';
    const fromCode = await service.parse('t1', await upload('hi.py', code));
    expect(fromCode.chunks.map((c) => c.headingPath)).toEqual([[]]);
  });

  it('chunks once per distinct chunker and publishes one parsed event per pipeline', async () => {
    const { producer, service, upload } = setUp();
    const markdown: ChunkerConfig = {
      strategy: 'markdown',
      size: 1000,
      overlap: 0,
      headingLevel: 2,
    };
    const paragraph: ChunkerConfig = { strategy: 'paragraph', size: 200 };
    const pipelines = [
      pipelineWith(markdown),
      pipelineWith(paragraph),
      pipelineOf('t1', markdown, 'test-hashing-384', DEFAULTS),
    ];
    const document = { ...(await upload('tides.md', GUIDE)), pipelines };
    await service.parse('t1', document);
    const parsedEvents = producer.events(Topics.documentParsed).map((e) => e.payload);
    expect(parsedEvents.map((e) => e.pipeline)).toEqual(
      pipelines.map((p) => ({
        key: p.key,
        model: p.model,
        space: p.space,
        knowledgeBaseIds: [],
        versionSpaces: pipelines.map((q) => q.space),
      })),
    );
    // Two chunkings, the third pipeline reusing the first's.
    expect(parsedEvents[2]!.chunks).toEqual(parsedEvents[0]!.chunks);
    expect(parsedEvents[1]!.chunks).not.toEqual(parsedEvents[0]!.chunks);
  });

  it('splits source code where definitions end, each chunk slicing back exactly', async () => {
    const { service, upload } = setUp();
    const fn = (name: string) =>
      [
        `export function ${name}(input: number[]): number {`,
        `  // ${name} walks the input once and keeps a running total of what it has seen so far.`,
        '  let total = 0;',
        '',
        '  for (const value of input) total += value;',
        '  return total;',
        '}',
      ].join('\n');
    const source = ['alpha', 'beta', 'gamma'].map(fn).join('\n\n') + '\n';
    // Each function is about 230 characters, with a blank line inside: two never fit in 400.
    const document = await upload('totals.ts', source, {
      strategy: 'recursive',
      size: 400,
      overlap: 0,
    });
    const parsed = await service.parse('t1', document);
    expect(parsed.chunks.map((c) => c.text.trim())).toEqual(['alpha', 'beta', 'gamma'].map(fn));
    for (const chunk of parsed.chunks)
      expect(source.slice(chunk.start, chunk.end)).toBe(chunk.text);
    // The same text as plain text splits at blank lines first, so a cut falls inside a function.
    const plain = await service.parse(
      't1',
      await upload('totals.txt', source, { strategy: 'recursive', size: 400, overlap: 0 }),
    );
    expect(plain.chunks.some((c) => !c.text.trim().endsWith('}'))).toBe(true);
    // A recursive chunker with separators of its own is used as configured.
    const own = await service.parse(
      't1',
      await upload('totals.ts', source, {
        strategy: 'recursive',
        size: 400,
        overlap: 0,
        separators: [' '],
      }),
    );
    expect(own.chunks.some((c) => !c.text.trim().endsWith('}'))).toBe(true);
  });

  it('refuses an original over its input bound as too_large before reading it', async () => {
    const { blobs, producer, service, upload } = setUp();
    const big = await upload('big.txt', 'x'.repeat(MAX_INPUT_BYTES + 1));
    const read = jest.spyOn(blobs, 'openRead');
    const failure: unknown = await service.parse('t1', big).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PermanentError);
    expect((failure as PermanentError).reason).toBe('too_large');
    expect(read).not.toHaveBeenCalled();
    expect(producer.events(Topics.documentParsed)).toHaveLength(0);
  });

  it('refuses an original larger than its event says once the bound is passed', async () => {
    const { producer, service, upload } = setUp();
    const lying = {
      ...(await upload('lying.txt', 'x'.repeat(MAX_INPUT_BYTES * 4))),
      sizeBytes: 10,
    };
    const failure: unknown = await service.parse('t1', lying).catch((error: unknown) => error);
    expect((failure as PermanentError).reason).toBe('too_large');
    expect(producer.events(Topics.documentParsed)).toHaveLength(0);
  });

  it('fails a DOCX whose central directory lies as too_large, and parses the next document', async () => {
    const { producer, service, upload } = setUp();
    const bomb = await upload('lying.docx', lyingDocx(20 * 1024 * 1024));
    const failure: unknown = await service.parse('t1', bomb).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PermanentError);
    const { reason, message } = failure as PermanentError;
    expect(reason).toBe('too_large');
    expect(producer.events(Topics.documentParsed)).toHaveLength(0);
    // Dead-lettered as the consumer does it: the document fails with that reason, not parse_error.
    await markFailedOnDeadLetter(
      producer,
      'parse_error',
    )({
      topic: Topics.document,
      key: bomb.documentId,
      reason,
      error: message,
      permanent: true,
      envelope: {
        tenantId: 't1',
        payload: { kind: 'uploaded', ...bomb },
      } as unknown as TopicEnvelope<typeof Topics.document>,
    });
    expect(producer.events(Topics.documentStatus).at(-1)!.payload).toMatchObject({
      documentId: bomb.documentId,
      status: 'failed',
      reason: 'too_large',
    });
    const parsed = await service.parse('t1', await upload('tides.md', GUIDE));
    expect(parsed.chunks.length).toBeGreaterThan(0);
    expect(producer.events(Topics.documentParsed)).toHaveLength(1);
  });

  describe('PII (ADR 51)', () => {
    const LETTER = 'Refund for jane.doe@example.com to card 4111 1111 1111 1111, please.';
    const withPii = async (
      setup: ReturnType<typeof setUp>,
      ...modes: Array<'detect' | 'redact' | 'block' | undefined>
    ) => {
      const document = await setup.upload('letter.txt', LETTER);
      const [pipeline] = document.pipelines;
      const sentence = { strategy: 'sentence', size: 200, overlap: 0 } as const;
      document.pipelines = modes.map((pii, i) => ({
        ...(i === 0 ? pipeline! : pipelineWith(sentence)),
        ...(pii ? { pii } : {}),
      }));
      return document;
    };

    it('redacts with the strictest setting of the pipelines, before storing and chunking', async () => {
      const setup = setUp();
      const document = await withPii(setup, 'detect', 'redact');
      const parsed = await setup.service.parse('t1', document);
      const redacted = 'Refund for [EMAIL] to card [CARD], please.';
      expect(parsed.chunks.map((c) => c.text)).toEqual([redacted]);
      for (const event of setup.producer.events(Topics.documentParsed)) {
        expect(JSON.stringify(event.payload)).not.toContain('jane.doe');
      }
      const body = extractedTextBodyKey('t1', document.documentId, 1);
      expect((await setup.blobs.get(body)).toString('utf8')).toBe(redacted);
      expect(setup.producer.events(Topics.documentStatus).map((e) => e.payload)).toEqual([
        { documentId: document.documentId, version: 1, status: 'parsing' },
        {
          documentId: document.documentId,
          version: 1,
          status: 'parsing',
          pii: { email: 1, card: 1 },
        },
      ]);
    });

    it('blocks as pii_blocked after reporting the findings, and parses nothing', async () => {
      const setup = setUp();
      const document = await withPii(setup, undefined, 'block');
      await expect(setup.service.parse('t1', document)).rejects.toMatchObject({
        reason: 'pii_blocked',
      });
      expect(setup.producer.events(Topics.documentParsed)).toEqual([]);
      expect(setup.producer.events(Topics.documentStatus).at(-1)!.payload).toMatchObject({
        pii: { email: 1, card: 1 },
      });
    });

    it('with every pipeline off, looks for nothing and reports nothing', async () => {
      const setup = setUp();
      const parsed = await setup.service.parse('t1', await withPii(setup, undefined));
      expect(parsed.chunks[0]!.text).toBe(LETTER);
      expect(setup.producer.events(Topics.documentStatus)).toHaveLength(1);
    });
  });

  it("reads with the settings of the document's knowledge bases", async () => {
    const { service, upload } = setUp();
    const scan = await upload('scan.png', renderText('A whiteboard photo'));
    scan.pipelines = [
      { ...scan.pipelines[0]!, parsing: { ocr: false, ocrLanguages: [], tableMode: 'records' } },
    ];
    const failure = (await service.parse('t1', scan).catch((e: unknown) => e)) as PermanentError;
    expect([failure.reason, failure.message]).toEqual([
      'no_text',
      '"scan.png" has no extractable text (OCR is off)',
    ]);
  });
});
