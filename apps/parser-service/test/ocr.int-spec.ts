import { PermanentError } from '@kb/kafka';
import { PDFDocument, StandardFonts } from 'pdf-lib';

import { OcrTextExtractor } from '../src/ocr/ocr-text.extractor';
import { characterAccuracy, PARAGRAPH, renderText } from './fixtures/ocr.fixtures';
import { builtExtractor, builtOcrPool, DEFAULT_LIMITS } from './fixtures/worker.fixtures';

/**
 * OCR the way the service runs it: extraction (and a scan's rendering) in the extraction pool,
 * recognition in the OCR pool, both on the build output.
 */
jest.setTimeout(60_000);

const pools: Array<{ close(): Promise<void> }> = [];
afterAll(() => Promise.all(pools.map((pool) => pool.close())));

function ocrExtractor(
  options: { pageTimeoutMs?: number; maxOcrPages?: number } = {},
): OcrTextExtractor {
  const extraction = builtExtractor({
    limits: { ...DEFAULT_LIMITS, maxOcrPages: options.maxOcrPages ?? 50 },
  });
  const ocr = builtOcrPool(options.pageTimeoutMs ? { pageTimeoutMs: options.pageTimeoutMs } : {});
  pools.push(extraction, ocr);
  return new OcrTextExtractor(extraction, ocr, {
    defaultLanguages: ['eng'],
    minConfidence: 60,
    maxTextChars: 1_000_000,
    log: () => undefined,
  });
}

/** A PDF whose page 1 has a text layer and whose page 2 is a scan: an image, no text. */
async function halfScannedPdf(scanText: string): Promise<Buffer> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  document.addPage().drawText('A typed cover page.', { x: 50, y: 700, size: 14, font });
  const scan = await document.embedPng(renderText(scanText));
  const page = document.addPage([612, 612 * (scan.height / scan.width)]);
  page.drawImage(scan, { x: 0, y: 0, width: page.getWidth(), height: page.getHeight() });
  return Buffer.from(await document.save());
}

const reasonOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => (error instanceof PermanentError ? error.reason : String(error)),
  );

describe('OCR in its own pool', () => {
  const extractor = ocrExtractor();

  it('reads the scanned page of a PDF into its page, the typed page as it is', async () => {
    const extracted = await extractor.extract({
      filename: 'contract.pdf',
      contentType: 'application/pdf',
      body: await halfScannedPdf(PARAGRAPH),
    });
    const [first, second] = extracted.pages!;
    expect(extracted.text.slice(first!.start, first!.end)).toBe('A typed cover page.');
    const scanned = extracted.text.slice(second!.start, second!.end);
    expect(characterAccuracy(PARAGRAPH, scanned)).toBeGreaterThanOrEqual(0.98);
    expect(extracted.ocr!.pages).toEqual([expect.objectContaining({ page: 2, flagged: false })]);
  });

  it('fails a PDF with more pages to read than OCR_MAX_PAGES too_large', async () => {
    const limited = ocrExtractor({ maxOcrPages: 0 });
    const body = await halfScannedPdf('one scanned page');
    expect(await reasonOf(limited.extract({ filename: 'a.pdf', contentType: '', body }))).toBe(
      'too_large',
    );
  });

  it('fails a page past the per-page timeout, and the pool reads the next one', async () => {
    const hasty = ocrExtractor({ pageTimeoutMs: 1 });
    const body = renderText(PARAGRAPH);
    expect(await reasonOf(hasty.extract({ filename: 'a.png', contentType: '', body }))).toBe(
      'timeout',
    );
    const read = await extractor.extract({ filename: 'b.png', contentType: '', body });
    expect(read.text).toContain('whiteboards');
  });
});
