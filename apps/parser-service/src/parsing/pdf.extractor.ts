import { ExtractionError } from './extraction.errors';
import type { Extracted, ExtractInput } from './extraction.model';

/** The text layer page by page, each page's offsets kept, and the title from the PDF info. */
export async function extractPdf(input: ExtractInput): Promise<Extracted> {
  const { PDFParse } = await import('pdf-parse');
  const parser = new PDFParse({ data: new Uint8Array(input.body) });
  try {
    const result = await parser.getText();
    const info = await parser.getInfo().catch(() => undefined);
    const pages: Array<{ page: number; start: number; end: number }> = [];
    let text = '';
    for (const page of result.pages) {
      if (text) text += '\n\n';
      const start = text.length;
      text += page.text;
      pages.push({ page: page.num, start, end: text.length });
    }
    const title = typeof info?.info?.Title === 'string' ? info.info.Title.trim() : '';
    return { text, format: 'pdf', pages, ...(title ? { title } : {}) };
  } catch (error) {
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
