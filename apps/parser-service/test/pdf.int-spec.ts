import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { PermanentError } from '@kb/kafka';
import { PDFDocument, StandardFonts } from 'pdf-lib';

import { DEFAULT_SETTINGS, type ExtractionSettings } from '../src/parsing/extraction.model';
import { builtExtractor } from './fixtures/worker.fixtures';

/**
 * PDF extraction on the real runtime: pdf.js loads its worker through a dynamic import, which
 * Node does and Jest's CommonJS sandbox does not, so extraction runs the way the service runs
 * it: in a worker thread on the build output (`npm test` builds before it tests).
 */
const extractor = builtExtractor();
afterAll(() => extractor.close());

async function extractInWorker(
  filename: string,
  body: Buffer,
  settings: ExtractionSettings = DEFAULT_SETTINGS,
): Promise<{ ok: boolean; value: Record<string, unknown> }> {
  try {
    const value = await extractor.extract({
      filename,
      contentType: 'application/octet-stream',
      body,
      settings,
    });
    return { ok: true, value: { ...value } };
  } catch (error) {
    if (!(error instanceof PermanentError)) throw error;
    return { ok: false, value: { reason: error.reason, message: error.message } };
  }
}

async function pdf(pages: string[]): Promise<Buffer> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (const text of pages) document.addPage().drawText(text, { x: 50, y: 700, size: 14, font });
  document.setTitle('Field notes');
  return Buffer.from(await document.save());
}

describe('PDF extraction (pdf-parse on pdf.js, in a worker thread)', () => {
  it('reads every page with its offsets and the document title', async () => {
    const { ok, value } = await extractInWorker(
      'notes.pdf',
      await pdf(['Comets grow tails near the Sun.', 'Moons orbit their planets.']),
    );
    expect(ok).toBe(true);
    expect(value).toMatchObject({ format: 'pdf', title: 'Field notes' });
    const text = value['text'] as string;
    const pages = value['pages'] as Array<{ page: number; start: number; end: number }>;
    expect(pages.map((p) => p.page)).toEqual([1, 2]);
    expect(text.slice(pages[0]!.start, pages[0]!.end)).toContain('Comets grow tails near the Sun.');
    expect(text.slice(pages[1]!.start, pages[1]!.end)).toContain('Moons orbit their planets.');
  });

  it('fails a malformed PDF as parse_error and a PDF without text as no_text', async () => {
    expect(
      await extractInWorker('broken.pdf', Buffer.from('%PDF-1.7\n%garbage without objects')),
    ).toMatchObject({
      ok: false,
      value: { reason: 'parse_error' },
    });
    // With OCR off; with it on, the blank page goes to OCR (ocr.int-spec.ts).
    const noOcr = { ...DEFAULT_SETTINGS, ocr: false };
    expect(await extractInWorker('blank.pdf', await pdf(['']), noOcr)).toMatchObject({
      ok: false,
      value: { reason: 'no_text' },
    });
  });

  it('fails a password-protected PDF as encrypted, with a message that says so', async () => {
    // fixtures/encrypted.pdf: one page of text, AES-128 with a user password (made with pypdf).
    const encrypted = readFileSync(join(__dirname, 'fixtures', 'encrypted.pdf'));
    expect(await extractInWorker('board-minutes.pdf', encrypted)).toEqual({
      ok: false,
      value: { reason: 'encrypted', message: '"board-minutes.pdf" is encrypted' },
    });
  });
});
