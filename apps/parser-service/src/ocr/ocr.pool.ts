import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { PermanentError } from '@kb/kafka';
import { Piscina } from 'piscina';

import { Slots } from '../parsing/slots';
import { describe } from '../parsing/worker.extractor';
import type { OcrResult, OcrTask } from './ocr.worker';

/** Reads one page's image; the pool below in the service, ocr.worker.ts in process in tests. */
export interface PageRecognizer {
  recognize(task: OcrTask): Promise<OcrResult>;
}

export interface OcrPoolOptions {
  /** Threads recognising at once (each runs tesseract's WebAssembly in one more thread). */
  workers: number;
  /** V8 old-generation heap of each thread. */
  maxMemoryMb: number;
  /** Wall-clock time of one page, from when a thread takes it. */
  pageTimeoutMs: number;
  /** The compiled worker entry; by default the one built next to this module (dist/ocr). */
  workerFile?: string;
  log: (message: string) => void;
}

/**
 * OCR in a pool of its own (piscina), apart from text extraction: a scan's pages queue here
 * without holding up the extraction of other documents. A page that runs past the timeout stops
 * its thread (and tesseract's with it) and fails the document `timeout`; a thread that dies
 * (out of heap) fails it `too_large`. The pool replaces the thread; the next thread pays
 * tesseract's start (about half a second) again.
 */
export class OcrPool implements PageRecognizer {
  private readonly pool: Piscina<OcrTask, OcrResult>;
  private readonly slots: Slots;
  private closed = false;

  constructor(private readonly options: OcrPoolOptions) {
    const filename = options.workerFile ?? join(__dirname, 'ocr.worker.js');
    if (!existsSync(filename)) throw new Error(`the OCR worker ${filename} is not built`);
    this.pool = new Piscina({
      filename,
      minThreads: 0,
      maxThreads: options.workers,
      // tesseract's start costs more than a page: keep a thread a while after its last page.
      idleTimeout: 300_000,
      resourceLimits: { maxOldGenerationSizeMb: options.maxMemoryMb },
    });
    this.pool.on('error', (error: unknown) =>
      options.log(`OCR worker failed between pages: ${describe(error)}`),
    );
    this.slots = new Slots(options.workers);
  }

  async recognize(task: OcrTask): Promise<OcrResult> {
    await this.slots.acquire();
    try {
      return await this.run(task);
    } finally {
      this.slots.release();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.pool.destroy();
  }

  private async run(task: OcrTask): Promise<OcrResult> {
    if (this.closed) throw new Error('OCR is shutting down');
    const timer = new AbortController();
    const timeout = setTimeout(() => timer.abort(), this.options.pageTimeoutMs);
    const image = new Uint8Array(task.image);
    try {
      return await this.pool.run(
        { image, languages: task.languages },
        { signal: timer.signal, transferList: [image.buffer] },
      );
    } catch (error) {
      if (timer.signal.aborted) {
        throw new PermanentError(
          'timeout',
          `a page took longer than the ${this.options.pageTimeoutMs} ms OCR may take`,
        );
      }
      if (this.closed) throw new Error(`OCR stopped: ${describe(error)}`);
      if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw new PermanentError(
          'too_large',
          `a page needs more than the ${this.options.maxMemoryMb} MB OCR may use`,
        );
      }
      throw new PermanentError('parse_error', `OCR failed: ${describe(error)}`);
    } finally {
      clearTimeout(timeout);
    }
  }
}
