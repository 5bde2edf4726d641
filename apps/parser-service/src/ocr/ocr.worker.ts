import { rmSync } from 'node:fs';

import { createWorker, OEM, type Worker } from 'tesseract.js';

import { languageFolder } from './ocr.languages';

/** One page for OCR: a PNG (or any image tesseract reads) and the languages to read it in. */
export interface OcrTask {
  image: Uint8Array;
  languages: string[];
}

/** What tesseract read: the text and its mean word confidence (0-100). */
export interface OcrResult {
  text: string;
  confidence: number;
}

let current: { key: string; worker: Worker; folder: string } | undefined;

/** The thread's tesseract worker for these languages; another set replaces it. */
async function workerFor(languages: string[]): Promise<Worker> {
  const key = languages.join('+');
  if (current?.key === key) return current.worker;
  await release();
  const folder = languageFolder(languages);
  const worker = await createWorker(languages, OEM.LSTM_ONLY, {
    langPath: folder,
    gzip: true,
    // Nothing is written or fetched: the data is read from the npm packages on every start.
    cacheMethod: 'none',
  });
  // Renders and most images carry no resolution; tesseract would guess 70 dpi (and say so on
  // stderr for every page). Pages are rendered at about 240 dpi, scans are usually 200-300.
  await worker.setParameters({ user_defined_dpi: '300' });
  current = { key, worker, folder };
  return worker;
}

async function release(): Promise<void> {
  if (!current) return;
  const { worker, folder } = current;
  current = undefined;
  await worker.terminate().catch(() => undefined);
  rmSync(folder, { recursive: true, force: true });
}

/**
 * Recognises one page. The OCR pool's threads run it (ocr.pool.ts loads the compiled file); it
 * can also run in the calling thread (tests, bench). tesseract.js runs its WebAssembly in a
 * thread of its own, started by the first page and kept for the next ones.
 */
export default async function recognizePage(task: OcrTask): Promise<OcrResult> {
  const worker = await workerFor(task.languages);
  const { data } = await worker.recognize(Buffer.from(task.image));
  return { text: data.text, confidence: data.confidence };
}

/** Stops the tesseract thread (in-process use; a pool thread's ends with the thread). */
export const stopRecognizer = release;
