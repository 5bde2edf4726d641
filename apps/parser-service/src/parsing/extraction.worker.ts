import { ExtractionError, type ExtractionFailure } from './extraction.errors';
import type {
  AttachmentLimits,
  Extracted,
  ExtractionLimits,
  ExtractionSettings,
} from './extraction.model';
import { extractText } from './text.extractor';

/** One document for a worker thread; the body arrives as a plain Uint8Array (structured clone). */
export interface ExtractionTask {
  filename: string;
  contentType: string;
  body: Uint8Array;
  limits: ExtractionLimits;
  settings?: ExtractionSettings;
  attachments?: AttachmentLimits;
}

/**
 * What a worker answers. Errors are answered, not thrown: a class does not cross threads, and the
 * main thread needs an ExtractionError's reason to fail the document with it.
 */
export type ExtractionOutcome =
  { ok: true; extracted: Extracted } | { ok: false; reason?: ExtractionFailure; message: string };

/**
 * The worker threads' entry point (worker.extractor.ts loads the compiled file, dist/parsing/
 * extraction.worker.js, into each thread). It loads the extractors only, not the Kafka client,
 * so a thread replacing a dead one is ready in a moment. Anything that kills the thread instead
 * of answering (out of memory, a crash) is dealt with by the main thread.
 */
export default async function extractInWorker(task: ExtractionTask): Promise<ExtractionOutcome> {
  const body = Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength);
  try {
    const extracted = await extractText(
      {
        filename: task.filename,
        contentType: task.contentType,
        body,
        ...(task.settings ? { settings: task.settings } : {}),
        ...(task.attachments ? { attachments: task.attachments } : {}),
      },
      task.limits,
    );
    return { ok: true, extracted };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return error instanceof ExtractionError
      ? { ok: false, reason: error.reason, message }
      : { ok: false, message };
  }
}
