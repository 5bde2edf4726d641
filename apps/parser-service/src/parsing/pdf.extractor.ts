import { ExtractionError } from './extraction.errors';
import type { Extracted, ExtractInput, ExtractionLimits } from './extraction.model';

/** Width a PDF page is rendered at for OCR: about 240 dpi for A4 or Letter. */
export const OCR_RENDER_WIDTH = 2000;

/** What rendering needs of pdf-parse's parser (its ESM and CommonJS typings differ). */
interface PdfParser {
  getScreenshot(params: {
    partial: number[];
    desiredWidth: number;
    imageBuffer: boolean;
    imageDataUrl: boolean;
  }): Promise<{ pages: Array<{ data: Uint8Array; width: number; height: number }> }>;
}

/**
 * The text layer page by page, each page's offsets kept, and the title from the PDF info. Pages
 * without a text layer (scans) are rendered (pdf.js on @napi-rs/canvas) for OCR when it is on.
 */
export async function extractPdf(
  input: ExtractInput,
  limits: ExtractionLimits,
  ocr: boolean,
): Promise<Extracted> {
  const { PDFParse } = await import('pdf-parse');
  const parser = new PDFParse({ data: new Uint8Array(input.body) });
  try {
    const result = await parser.getText();
    const info = await parser.getInfo().catch(() => undefined);
    const pages: Array<{ page: number; start: number; end: number }> = [];
    let text = '';
    const blank: number[] = [];
    for (const page of result.pages) {
      if (text) text += '\n\n';
      const start = text.length;
      text += page.text;
      pages.push({ page: page.num, start, end: text.length });
      if (!/\S/.test(page.text)) blank.push(page.num);
    }
    const title = typeof info?.info?.Title === 'string' ? info.info.Title.trim() : '';
    const extracted: Extracted = { text, format: 'pdf', pages, ...(title ? { title } : {}) };
    if (!ocr || blank.length === 0) return extracted;
    if (blank.length > limits.maxOcrPages) {
      throw new ExtractionError(
        'too_large',
        `"${input.filename}" has ${blank.length} pages without text, over the ${limits.maxOcrPages} OCR reads`,
      );
    }
    return { ...extracted, ocrPages: await renderPages(parser, blank, limits, input.filename) };
  } catch (error) {
    if (error instanceof ExtractionError) throw error;
    const name = (error as { name?: string }).name ?? '';
    if (name === 'PasswordException') {
      throw new ExtractionError('encrypted', `"${input.filename}" is encrypted`);
    }
    throw new ExtractionError(
      'parse_error',
      `"${input.filename}" is not a readable PDF: ${String(error)}`,
    );
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}

/** One page at a time, so at most one rendered page is held beside the PNGs already made. */
async function renderPages(
  parser: PdfParser,
  numbers: number[],
  limits: ExtractionLimits,
  filename: string,
): Promise<Array<{ page: number; image: Uint8Array }>> {
  const rendered: Array<{ page: number; image: Uint8Array }> = [];
  for (const page of numbers) {
    const shot = await parser.getScreenshot({
      partial: [page],
      desiredWidth: OCR_RENDER_WIDTH,
      imageBuffer: true,
      imageDataUrl: false,
    });
    const image = shot.pages[0];
    if (!image) continue;
    if (image.width * image.height > limits.maxImagePixels) {
      throw new ExtractionError(
        'too_large',
        `page ${page} of "${filename}" renders to ${image.width}×${image.height} pixels, over the ${limits.maxImagePixels} OCR reads`,
      );
    }
    rendered.push({ page, image: image.data });
  }
  return rendered;
}
