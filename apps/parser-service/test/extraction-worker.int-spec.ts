import { randomUUID } from 'node:crypto';

import { DEFAULT_CHUNKER, type DocumentUploaded, pipelineOf, Topics } from '@kb/contracts';
import { PermanentError } from '@kb/kafka';
import { MemoryBlobStore, MemoryEventProducer } from '@kb/testing';
import { Document, Packer, Paragraph } from 'docx';

import { wordCounter } from '../src/chunking/token.counter';
import type { ExtractInput } from '../src/parsing/extraction.model';
import { ParsingService } from '../src/parsing/parsing.service';
import type { WorkerTextExtractor } from '../src/parsing/worker.extractor';
import { MALFORMED } from './fixtures/malformed.fixtures';
import { builtExtractor, DEFAULT_LIMITS } from './fixtures/worker.fixtures';
import { lyingDocx, manyEntries } from './fixtures/zip.fixtures';

/**
 * The real extraction worker, compiled (dist/parsing/extraction.worker.js), in the pool the
 * service runs: hostile documents fail with a reason, and the next document still parses.
 */
const input = (filename: string, body: Buffer | string): ExtractInput => ({
  filename,
  contentType: 'application/octet-stream',
  body: Buffer.from(body),
});

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return error instanceof PermanentError ? error.reason : `not permanent: ${String(error)}`;
  }
  return 'no failure';
}

const docx = (text: string) =>
  Packer.toBuffer(new Document({ sections: [{ children: [new Paragraph(text)] }] }));

/** JSON of many small objects: a few MB that parse into far more heap than that. */
const objectHeavyJson = (count: number) =>
  `[${Array.from({ length: count }, (_, i) => `{"id":${i},"tags":["a","b"]}`).join(',')}]`;

describe('extraction in worker threads (built worker)', () => {
  const pools: WorkerTextExtractor[] = [];
  const pool = (...args: Parameters<typeof builtExtractor>) => {
    const created = builtExtractor(...args);
    pools.push(created);
    return created;
  };
  afterAll(() => Promise.all(pools.map((p) => p.close())));

  it('fails a DOCX whose central directory lies as too_large; the service parses the next document', async () => {
    const blobs = new MemoryBlobStore();
    const producer = new MemoryEventProducer();
    const service = new ParsingService(blobs, producer, wordCounter, pool({ maxMemoryMb: 128 }), {
      PARSER_MAX_INPUT_BYTES: 100 * 1024 * 1024,
      PARSER_MAX_ATTACHMENTS: 20,
    });
    const upload = async (filename: string, body: Buffer): Promise<DocumentUploaded> => {
      const key = `blobs/t1/sha256/${randomUUID()}`;
      await blobs.put(key, body);
      return {
        documentId: randomUUID(),
        version: 1,
        filename,
        contentType: 'application/octet-stream',
        sizeBytes: body.length,
        sha256: 'a'.repeat(64),
        blob: { bucket: blobs.bucket, key },
        title: filename,
        metadata: {},
        attributes: { knowledgeBaseIds: [], tags: [], metadata: {}, uploadedAt: 0, principals: [] },
        pipelines: [
          pipelineOf('t1', DEFAULT_CHUNKER, 'all-MiniLM-L6-v2', {
            chunker: DEFAULT_CHUNKER,
            model: 'all-MiniLM-L6-v2',
          }),
        ],
      };
    };
    // Declares 100 bytes; inflates to 300 MiB, past the 128 MB heap if anything read it whole.
    const bomb = lyingDocx(300 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    expect(await reasonOf(service.parse('t1', await upload('lying.docx', bomb)))).toBe('too_large');
    const next = await service.parse(
      't1',
      await upload('next.docx', await docx('Keepers trimmed the wicks every night.')),
    );
    expect(next.chunks.map((c) => c.text)).toEqual(['Keepers trimmed the wicks every night.']);
    expect(producer.events(Topics.documentParsed)).toHaveLength(1);
  }, 60_000);

  it('fails an archive of more entries than the default limit as too_large', async () => {
    expect(await reasonOf(pool().extract(input('many.docx', manyEntries(10_001))))).toBe(
      'too_large',
    );
  }, 60_000);

  it('extracts or fails with a reason every file of the malformed corpus, then a DOCX', async () => {
    const extractor = pool();
    for (const file of MALFORMED) {
      const outcome = await extractor.extract(input(file.filename, await file.body())).then(
        () => 'extracted',
        (error: unknown) =>
          error instanceof PermanentError ? error.reason : `not permanent: ${String(error)}`,
      );
      expect([file.name, outcome]).toEqual([
        file.name,
        expect.stringMatching(/^(extracted|parse_error|too_large|no_text|unsupported_type)$/),
      ]);
    }
    const next = await extractor.extract(input('after.docx', await docx('still parsing')));
    expect(next.text).toBe('still parsing');
  }, 120_000);

  it('fails a document that exhausts its worker heap as too_large, then extracts the next', async () => {
    const extractor = pool({ maxMemoryMb: 16 });
    expect(await reasonOf(extractor.extract(input('heavy.json', objectHeavyJson(400_000))))).toBe(
      'too_large',
    );
    expect(await extractor.extract(input('light.json', '{"a":1}'))).toEqual({
      text: '{\n  "a": 1\n}',
      format: 'json',
    });
  }, 60_000);

  it('fails a document that extracts past the timeout as timeout, then extracts the next', async () => {
    // Seconds of work on any machine, and no other bound that could stop it first: a heap so large
    // and a text limit so high that only the clock can (with the defaults, a fast machine finished
    // the JSON within 1.5 s and failed it too_large for its 60 M characters of text). The next
    // document's 1.5 s include starting a fresh thread.
    const slow = pool({
      timeoutMs: 1_500,
      maxMemoryMb: 4_096,
      limits: { ...DEFAULT_LIMITS, maxTextChars: Number.MAX_SAFE_INTEGER },
    });
    expect(await reasonOf(slow.extract(input('big.json', objectHeavyJson(3_000_000))))).toBe(
      'timeout',
    );
    expect((await slow.extract(input('small.txt', 'small'))).text).toBe('small');
  }, 60_000);
});
