import { ExtractionError } from './extraction.errors';
import type { Extracted, ExtractInput, ExtractionLimits } from './extraction.model';

/**
 * An image (PNG, JPEG, TIFF, WebP) as pages for OCR: each page (a TIFF may hold several) decoded
 * by sharp (libvips) and re-encoded as a greyscale PNG, which tesseract reads whatever the
 * source's colour model. The pixel and page limits are checked on the header, before anything is
 * decoded. With OCR off the image has no text (`no_text`).
 */
export async function extractImage(
  input: ExtractInput,
  limits: ExtractionLimits,
  ocr: boolean,
): Promise<Extracted> {
  const { default: sharp } = await import('sharp');
  let metadata: Awaited<ReturnType<ReturnType<typeof sharp>['metadata']>>;
  try {
    metadata = await sharp(input.body, { limitInputPixels: false }).metadata();
  } catch (error) {
    throw new ExtractionError(
      'parse_error',
      `"${input.filename}" is not a readable image: ${String(error)}`,
    );
  }
  const width = metadata.width ?? 0;
  const height = metadata.pageHeight ?? metadata.height ?? 0;
  const pageCount = metadata.pages ?? 1;
  if (width * height > limits.maxImagePixels) {
    throw new ExtractionError(
      'too_large',
      `"${input.filename}" is ${width}×${height} pixels, over the ${limits.maxImagePixels} OCR reads`,
    );
  }
  if (pageCount > limits.maxOcrPages) {
    throw new ExtractionError(
      'too_large',
      `"${input.filename}" has ${pageCount} pages, over the ${limits.maxOcrPages} OCR reads`,
    );
  }
  const pages = Array.from({ length: pageCount }, (_, index) => ({
    page: index + 1,
    start: 0,
    end: 0,
  }));
  if (!ocr) return { text: '', format: 'image', pages };
  const ocrPages: Array<{ page: number; image: Uint8Array }> = [];
  for (const { page } of pages) {
    try {
      const png = await sharp(input.body, {
        page: page - 1,
        limitInputPixels: limits.maxImagePixels,
      })
        .greyscale()
        .png({ compressionLevel: 1 })
        .toBuffer();
      ocrPages.push({ page, image: new Uint8Array(png) });
    } catch (error) {
      throw new ExtractionError(
        'parse_error',
        `page ${page} of "${input.filename}" cannot be decoded: ${String(error)}`,
      );
    }
  }
  return { text: '', format: 'image', pages, ocrPages };
}
