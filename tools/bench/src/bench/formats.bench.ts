import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';

import {
  type ExtractionLimits,
  extractText,
  OcrPool,
  recognizePage,
  stopRecognizer,
} from '@kb/parser-service/bench';

import { characterAccuracy, formatFiles, PARAGRAPH, renderedText } from './format-files';

/** The parser's defaults (apps/parser-service/src/config/parser.config.ts). */
const LIMITS: ExtractionLimits = {
  maxZipEntries: 10_000,
  maxInflatedBytes: 64 * 1024 * 1024,
  maxTextChars: 20_000_000,
  maxImagePixels: 40_000_000,
  maxOcrPages: 50,
};

export interface FormatsBenchOptions {
  /** Sentences of filler in each file (the e2e files have 50). */
  lines: number;
  /** Timed extractions per format, after one untimed. */
  rounds: number;
  /** Pages OCR reads for its seconds per page, per pool size. */
  ocrPages: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const round = (value: number, digits = 2): number => Number(value.toFixed(digits));

/**
 * The parser's throughput per format, in process on one core (extraction only; OCR pages are
 * rendered but not read), and OCR: character accuracy on a rendered paragraph and seconds per
 * page through the OCR pool with one thread and with one per core (docs/adr/0050).
 */
export async function runFormatsBench(options: FormatsBenchOptions): Promise<object> {
  const formats = [];
  for (const file of await formatFiles(options.lines)) {
    const input = { filename: file.filename, contentType: file.type, body: file.body };
    await extractText(input, LIMITS);
    const times: number[] = [];
    let chars = 0;
    for (let i = 0; i < options.rounds; i++) {
      const started = performance.now();
      chars = (await extractText(input, LIMITS)).text.length;
      times.push(performance.now() - started);
    }
    const ms = median(times);
    formats.push({
      file: file.filename,
      bytes: file.body.length,
      chars,
      ms_per_document: round(ms),
      mb_per_s: round(file.body.length / 1e6 / (ms / 1000)),
      chars_per_s: Math.round(chars / (ms / 1000)),
    });
    console.error(`${file.filename}: ${round(ms)} ms, ${chars} chars`);
  }
  const ocr = await ocrFigures(options.ocrPages);
  return { bench: 'formats', cores: availableParallelism(), formats, ocr };
}

async function ocrFigures(pages: number): Promise<object> {
  const image = renderedText(PARAGRAPH);
  // In process: the first call starts tesseract (its WebAssembly and the eng model).
  let started = performance.now();
  const first = await recognizePage({ image, languages: ['eng'] });
  const startMs = performance.now() - started;
  started = performance.now();
  const second = await recognizePage({ image, languages: ['eng'] });
  const pageMs = performance.now() - started;
  await stopRecognizer();
  const accuracy = characterAccuracy(PARAGRAPH, second.text);
  const pools = [];
  for (const workers of [...new Set([1, availableParallelism()])]) {
    const pool = new OcrPool({
      workers,
      maxMemoryMb: 256,
      pageTimeoutMs: 60_000,
      log: (message) => console.error(message),
    });
    // Each thread starts tesseract on its first page: warm them all, then time `pages` pages.
    await Promise.all(
      Array.from({ length: workers }, () => pool.recognize({ image, languages: ['eng'] })),
    );
    started = performance.now();
    await Promise.all(
      Array.from({ length: pages }, () => pool.recognize({ image, languages: ['eng'] })),
    );
    const seconds = (performance.now() - started) / 1000;
    const rssMb = Math.round(process.memoryUsage().rss / 1024 / 1024);
    await pool.close();
    pools.push({
      workers,
      pages,
      seconds_per_page: round(seconds / pages, 3),
      pages_per_s: round(pages / seconds),
      process_rss_mb: rssMb,
    });
    console.error(`OCR pool of ${workers}: ${round(seconds / pages, 3)} s per page`);
  }
  return {
    character_accuracy: round(accuracy, 4),
    confidence: second.confidence,
    first_page_ms: Math.round(startMs),
    page_ms_warm: Math.round(pageMs),
    paragraph_chars: PARAGRAPH.length,
    image: { width: 1700, format: 'png', text_px: 34 },
    first_text_matches_second: first.text === second.text,
    pools,
  };
}
