import sharp from 'sharp';

import { extract, reasonOf, upload } from '../../test/fixtures/extraction.fixtures';
import { pngDeclaring } from '../../test/fixtures/malformed.fixtures';
import { characterAccuracy, PARAGRAPH, renderText } from '../../test/fixtures/ocr.fixtures';
import { DEFAULT_SETTINGS } from '../parsing/extraction.model';
import recognizePage, { stopRecognizer } from './ocr.worker';
import { OcrTextExtractor } from './ocr-text.extractor';

/** Extraction and OCR in this thread: the service runs both in pools (ocr.pool.ts). */
const ocrExtractor = (minConfidence = 60) =>
  new OcrTextExtractor(
    { extract: (input) => extract(input) },
    { recognize: recognizePage },
    { defaultLanguages: ['eng'], minConfidence, maxTextChars: 1_000_000, log: () => undefined },
  );

// tesseract starts in about a second and reads a page in about half of one, on a busy machine more.
jest.setTimeout(30_000);

afterAll(() => stopRecognizer());

describe('OCR of images', () => {
  it('reads a rendered paragraph with at least 98 % of its characters right', async () => {
    const result = await recognizePage({ image: renderText(PARAGRAPH), languages: ['eng'] });
    const accuracy = characterAccuracy(PARAGRAPH, result.text);
    // The figure the ADR reports (docs/adr/0050); the bench prints it too.
    console.log(
      `OCR character accuracy ${(accuracy * 100).toFixed(2)} %, confidence ${result.confidence}`,
    );
    expect(accuracy).toBeGreaterThanOrEqual(0.98);
    expect(result.confidence).toBeGreaterThan(80);
  });

  it.each([
    ['scan.png', (png: Buffer) => Promise.resolve(png)],
    ['scan.jpg', (png: Buffer) => sharp(png).jpeg().toBuffer()],
    ['scan.tiff', (png: Buffer) => sharp(png).tiff().toBuffer()],
    ['scan.webp', (png: Buffer) => sharp(png).webp().toBuffer()],
  ])('makes %s searchable text with its page and confidence', async (filename, encode) => {
    const body = await encode(renderText('Invoice number 4471 for the quarterly zeppelin audit'));
    const extracted = await ocrExtractor().extract(upload(filename, body));
    expect(extracted.format).toBe('image');
    expect(extracted.text).toContain('zeppelin');
    expect(extracted.pages).toEqual([{ page: 1, start: 0, end: extracted.text.length }]);
    expect(extracted.ocr!.pages[0]).toMatchObject({ page: 1, flagged: false });
    expect(extracted.ocr!.pages[0]!.confidence).toBeGreaterThan(60);
  });

  it('fails an image over the pixel limit too_large before decoding it', async () => {
    const body = await sharp({
      create: { width: 3000, height: 3000, channels: 3, background: 'white' },
    })
      .png()
      .toBuffer();
    expect(await reasonOf(extract(upload('big.png', body), { maxImagePixels: 8_000_000 }))).toBe(
      'too_large',
    );
  });

  it('fails a PNG declaring a huge size in a few bytes too_large, from its header', async () => {
    expect(await reasonOf(extract(upload('bomb.png', pngDeclaring(100_000, 100_000))))).toBe(
      'too_large',
    );
  });

  it('leaves out a page under the confidence threshold, and fails the document no_text', async () => {
    const body = renderText('Nothing here reads with full confidence at all');
    const error = await ocrExtractor(100)
      .extract(upload('blurred.png', body))
      .catch((caught: unknown) => caught as Error & { reason: string });
    expect((error as { reason: string }).reason).toBe('no_text');
    expect((error as Error).message).toContain('1 page(s) flagged');
  });

  it('reads no image when the knowledge base turned OCR off', async () => {
    const input = {
      ...upload('scan.png', renderText('words')),
      settings: { ...DEFAULT_SETTINGS, ocr: false },
    };
    expect(await reasonOf(extract(input))).toBe('no_text');
  });
});
