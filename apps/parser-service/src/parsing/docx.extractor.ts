import { ExtractionError } from './extraction.errors';
import type { Extracted, ExtractInput, ExtractionLimits } from './extraction.model';
import { htmlToText } from './html.extractor';
import { inspectZip } from './zip.inspector';

/**
 * Paragraphs with headings as `#` lines (mammoth's HTML, read as HTML). The archive is inspected
 * first with real inflated sizes (zip.inspector.ts), so mammoth only ever opens an archive whose
 * entries were counted. Images carry no text: they are not read at all.
 */
export async function extractDocx(
  input: ExtractInput,
  limits: ExtractionLimits,
): Promise<Extracted> {
  await inspectZip(input.body, limits, input.filename);
  const mammoth = await import('mammoth');
  try {
    const { value } = await mammoth.convertToHtml(
      { buffer: input.body },
      { convertImage: mammoth.images.imgElement(async () => ({ src: '' })) },
    );
    return { ...htmlToText(value), format: 'docx' };
  } catch (error) {
    throw new ExtractionError(
      'parse_error',
      `"${input.filename}" is not a readable DOCX: ${String(error)}`,
    );
  }
}
