import { join } from 'node:path';

import { PermanentError } from '@kb/kafka';

import type { ExtractionLimits } from '../src/parsing/extraction.model';
import { type WorkerExtractorOptions, WorkerTextExtractor } from '../src/parsing/worker.extractor';

/**
 * The pool around the threads, with a stand-in worker whose documents hang, hoard memory, exit or
 * throw outside their task. The real worker (dist/parsing/extraction.worker.js) is exercised by
 * extraction-worker.int-spec.ts on the build output. In the integration tier, not the unit tier:
 * the timeouts and out-of-memory threads take seconds (docs/adr/0035).
 */
const MISBEHAVING = join(__dirname, 'fixtures', 'misbehaving.worker.js');
const LIMITS: ExtractionLimits = {
  maxZipEntries: 10,
  maxInflatedBytes: 1024,
  maxTextChars: 1024,
  maxImagePixels: 1_000_000,
  maxOcrPages: 2,
};

const doc = (filename: string, text = 'fine') => ({
  filename,
  contentType: 'text/plain',
  body: Buffer.from(text),
});

async function failureOf(promise: Promise<unknown>): Promise<{ reason?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PermanentError) return { reason: error.reason, message: error.message };
    return { message: String(error) };
  }
  throw new Error('expected the extraction to fail');
}

describe('WorkerTextExtractor', () => {
  let extractor: WorkerTextExtractor;
  let logged: string[];
  const start = (options: Partial<WorkerExtractorOptions> = {}) => {
    logged = [];
    extractor = new WorkerTextExtractor({
      limits: LIMITS,
      workers: 1,
      maxMemoryMb: 32,
      timeoutMs: 2_000,
      workerFile: MISBEHAVING,
      log: (message) => logged.push(message),
      ...options,
    });
    return extractor;
  };
  afterEach(() => extractor.close());

  it('answers with what the worker extracted', async () => {
    expect(await start().extract(doc('a.txt', 'hello'))).toEqual({ text: 'hello', format: 'text' });
  });

  it('stops a document that runs past the timeout (timeout), then extracts the next', async () => {
    // The next document's clock includes starting a fresh thread: leave it room on a busy machine.
    start({ timeoutMs: 1_500 });
    expect(await failureOf(extractor.extract(doc('hang.txt')))).toEqual({
      reason: 'timeout',
      message: '"hang.txt" took longer than 1500 ms to extract',
    });
    expect((await extractor.extract(doc('next.txt', 'next'))).text).toBe('next');
  });

  it('fails a document whose worker runs out of memory (too_large), then extracts the next', async () => {
    start({ timeoutMs: 30_000 });
    expect(await failureOf(extractor.extract(doc('hoard.txt')))).toEqual({
      reason: 'too_large',
      message: '"hoard.txt" needs more than the 32 MB an extraction may use',
    });
    expect(logged.join('\n')).toMatch(/ERR_WORKER_OUT_OF_MEMORY/);
    expect((await extractor.extract(doc('next.txt', 'next'))).text).toBe('next');
  }, 30_000);

  it.each(['exit.txt', 'throw-later.txt'])(
    'fails a document that kills its worker (%s) as too_large, then extracts the next',
    async (filename) => {
      start();
      expect(await failureOf(extractor.extract(doc(filename)))).toEqual({
        reason: 'too_large',
        message: `"${filename}" stopped the extraction worker before it finished`,
      });
      expect((await extractor.extract(doc('next.txt', 'next'))).text).toBe('next');
    },
  );

  it("starts a document's clock when a thread is free, not while it waits for one", async () => {
    start({ timeoutMs: 1_500 });
    const hung = failureOf(extractor.extract(doc('hang.txt')));
    // Waits about 1.5 s behind the hung document, then has its own 1.5 s.
    const waiting = extractor.extract(doc('waiting.txt', 'waited'));
    expect((await hung).reason).toBe('timeout');
    expect((await waiting).text).toBe('waited');
  });

  it('does not fail a document for good when the pool is closing', async () => {
    start({ timeoutMs: 10_000 });
    const running = failureOf(extractor.extract(doc('hang.txt')));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await extractor.close();
    const failure = await running;
    expect(failure.reason).toBeUndefined();
    expect(failure.message).toMatch(/text extraction stopped/);
  });

  it('refuses to start without its built worker', () => {
    expect(() => start({ workerFile: join(__dirname, 'missing.worker.js') })).toThrow(
      /is not built/,
    );
    extractor = start(); // for afterEach
  });
});
