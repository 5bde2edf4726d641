import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { PermanentError } from '@kb/kafka';
import { Piscina } from 'piscina';

import type { Extracted, ExtractInput, ExtractionLimits, TextExtractor } from './extraction.model';
import type { ExtractionOutcome, ExtractionTask } from './extraction.worker';
import { Slots } from './slots';

export interface WorkerExtractorOptions {
  limits: ExtractionLimits;
  /** Threads extracting at once. */
  workers: number;
  /** V8 old-generation heap of each thread. */
  maxMemoryMb: number;
  /** Wall-clock time of one extraction, from when a thread takes it. */
  timeoutMs: number;
  /** The compiled worker entry; by default the one built next to this module (dist/parsing). */
  workerFile?: string;
  log: (message: string) => void;
}

/**
 * Text extraction in a pool of worker threads (piscina), so that no document can take the
 * service down (review H1, docs/adr/0016). Each thread has its own heap limit; a document that
 * exhausts it, or crashes its thread, fails `too_large`, and one that runs past the timeout has
 * its thread stopped and fails `timeout`. Both are PermanentErrors: dead-lettered at once, the
 * document marked failed, and the pool replaces the thread for the next document.
 */
export class WorkerTextExtractor implements TextExtractor {
  private readonly pool: Piscina<ExtractionTask, ExtractionOutcome>;
  private readonly slots: Slots;
  private closed = false;

  constructor(private readonly options: WorkerExtractorOptions) {
    const filename = options.workerFile ?? join(__dirname, 'extraction.worker.js');
    // Services run from dist, where the build puts the worker beside this file.
    if (!existsSync(filename)) throw new Error(`the extraction worker ${filename} is not built`);
    this.pool = new Piscina({
      filename,
      minThreads: 1,
      maxThreads: options.workers,
      idleTimeout: 60_000,
      resourceLimits: { maxOldGenerationSizeMb: options.maxMemoryMb },
    });
    // A thread that dies with no task on it is reported here; unheard, the event would throw.
    this.pool.on('error', (error: unknown) =>
      options.log(`extraction worker failed between documents: ${describe(error)}`),
    );
    this.slots = new Slots(options.workers);
  }

  async extract(input: ExtractInput): Promise<Extracted> {
    // One document per thread and no queue inside the pool: a document's clock starts when a
    // thread is free for it, so a slow neighbour never makes it time out.
    await this.slots.acquire();
    try {
      return await this.run(input);
    } finally {
      this.slots.release();
    }
  }

  /** Stops the threads; a document still extracting is retried by the next consumer. */
  async close(): Promise<void> {
    this.closed = true;
    await this.pool.destroy();
  }

  private async run(input: ExtractInput): Promise<Extracted> {
    if (this.closed) throw new Error('text extraction is shutting down');
    const timer = new AbortController();
    const timeout = setTimeout(() => timer.abort(), this.options.timeoutMs);
    // The thread gets its own copy of the bytes (and only them: a Buffer may view a larger pool).
    const body = new Uint8Array(input.body);
    let outcome: ExtractionOutcome;
    try {
      outcome = await this.pool.run(
        {
          filename: input.filename,
          contentType: input.contentType,
          body,
          limits: this.options.limits,
          ...(input.settings ? { settings: input.settings } : {}),
          ...(input.attachments ? { attachments: input.attachments } : {}),
        },
        { signal: timer.signal, transferList: [body.buffer] },
      );
    } catch (error) {
      throw this.failure(input.filename, error, timer.signal.aborted);
    } finally {
      clearTimeout(timeout);
    }
    if (outcome.ok) return outcome.extracted;
    // A reason is the document's own failure (an ExtractionError in the thread); none is an
    // unexpected error, worth retrying.
    if (outcome.reason) throw new PermanentError(outcome.reason, outcome.message);
    throw new Error(outcome.message);
  }

  /** Why a thread gave no answer: the timeout, the document killing it, or shutting down. */
  private failure(filename: string, error: unknown, timedOut: boolean): Error {
    if (timedOut) {
      return new PermanentError(
        'timeout',
        `"${filename}" took longer than ${this.options.timeoutMs} ms to extract`,
      );
    }
    // Threads stopped by close(): nothing is wrong with the document.
    if (this.closed) return new Error(`text extraction stopped: ${describe(error)}`);
    this.options.log(`extraction worker died on "${filename}": ${describe(error)}`);
    const outOfMemory = (error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY';
    return new PermanentError(
      'too_large',
      outOfMemory
        ? `"${filename}" needs more than the ${this.options.maxMemoryMb} MB an extraction may use`
        : `"${filename}" stopped the extraction worker before it finished`,
    );
  }
}

export const describe = (error: unknown): string =>
  error instanceof Error
    ? `${(error as { code?: string }).code ?? error.name}: ${error.message}`
    : String(error);
