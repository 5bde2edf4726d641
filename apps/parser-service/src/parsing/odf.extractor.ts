import type { Extracted, ExtractInput, ExtractionLimits } from './extraction.model';
import { type Sheet, sheetsToText, type Slide, slidesToText, TextBuilder } from './text.builder';
import { ParagraphCollector, requirePart, walkXml } from './xml.parts';
import { inspectZip } from './zip.inspector';

export type OdfFormat = 'odt' | 'ods' | 'odp';

/** Elements whose text is not the document's: deleted text of tracked changes, footnote marks. */
const SKIPPED = new Set(['text:tracked-changes', 'text:note-citation', 'office:annotation-end']);
/** A repeated row or cell is written out at most this many times (empty ones only count). */
const MAX_REPEAT = 256;

/**
 * OpenDocument text, spreadsheets and presentations from `content.xml`: ODT paragraphs with its
 * headings as `#` lines, ODS sheets as XLSX's are (text.builder.ts), ODP pages (slides) with
 * their notes as PPTX's are. The archive is counted first (zip.inspector.ts).
 */
export async function extractOdf(
  input: ExtractInput,
  limits: ExtractionLimits,
  format: OdfFormat,
  tableMode: 'records' | 'text' = 'records',
): Promise<Extracted> {
  const zip = await inspectZip(input.body, limits, input.filename);
  const content = await requirePart(zip, 'content.xml', input.filename);
  if (format === 'ods') return { ...sheetsToText(odsSheets(content), tableMode), format };
  return { ...(format === 'odt' ? odtText(content) : odpText(content)), format };
}

interface OdfHandlers {
  open?(name: string, attributes: Record<string, string>): void;
  close?(name: string): void;
  /** A finished paragraph (`text:p`), or heading (`text:h`, level ≥ 1). */
  paragraph(text: string, headingLevel: number): void;
}

/** Walks `content.xml`'s body: spaces, tabs and line breaks as text, paragraphs as they close. */
function walkOdf(xml: string, handlers: OdfHandlers): void {
  const collector = new ParagraphCollector((name) => name === 'text:p' || name === 'text:h');
  const levels: number[] = [];
  let skipping = 0;
  walkXml(xml, {
    open(name, attributes) {
      if (SKIPPED.has(name) || skipping > 0) {
        if (SKIPPED.has(name)) skipping++;
        return;
      }
      if (name === 'text:s')
        collector.text(' '.repeat(Math.min(Number(attributes['text:c']) || 1, 100)));
      else if (name === 'text:tab' || name === 'text:line-break') collector.text(' ');
      else if (collector.open(name)) {
        levels.push(name === 'text:h' ? Number(attributes['text:outline-level']) || 1 : 0);
      } else handlers.open?.(name, attributes);
    },
    text(text) {
      if (skipping === 0) collector.text(text);
    },
    close(name) {
      if (SKIPPED.has(name)) skipping = Math.max(0, skipping - 1);
      if (skipping > 0) return;
      const paragraph = collector.close(name);
      if (paragraph !== undefined) handlers.paragraph(paragraph, levels.pop() ?? 0);
      else handlers.close?.(name);
    },
  });
}

function odtText(xml: string): { text: string } {
  const out = new TextBuilder();
  walkOdf(xml, {
    paragraph: (text, level) => (level > 0 ? out.heading(level, text) : out.block(text)),
  });
  return { text: out.result().text };
}

function odsSheets(xml: string): Sheet[] {
  const sheets: Sheet[] = [];
  let rowNumber = 0;
  let column = 0;
  let row: { repeat: number; cells: Sheet['rows'][number]['cells'] } | undefined;
  let cell: { repeat: number; parts: string[] } | undefined;
  const repeat = (value: string | undefined) => Math.max(1, Number(value) || 1);
  walkOdf(xml, {
    open(name, attributes) {
      if (name === 'table:table') {
        sheets.push({ name: attributes['table:name'] ?? `Sheet ${sheets.length + 1}`, rows: [] });
        rowNumber = 0;
      } else if (name === 'table:table-row') {
        row = { repeat: repeat(attributes['table:number-rows-repeated']), cells: [] };
        column = 0;
      } else if (name === 'table:table-cell' || name === 'table:covered-table-cell') {
        cell = { repeat: repeat(attributes['table:number-columns-repeated']), parts: [] };
      }
    },
    paragraph(text) {
      cell?.parts.push(text);
    },
    close(name) {
      if ((name === 'table:table-cell' || name === 'table:covered-table-cell') && cell && row) {
        const value = cell.parts.join(' ').trim();
        for (let i = 0; value && i < Math.min(cell.repeat, MAX_REPEAT); i++) {
          row.cells.push({ column: column + i + 1, value });
        }
        column += cell.repeat;
        cell = undefined;
      } else if (name === 'table:table-row' && row) {
        const sheet = sheets[sheets.length - 1];
        for (
          let i = 0;
          sheet && row.cells.length > 0 && i < Math.min(row.repeat, MAX_REPEAT);
          i++
        ) {
          sheet.rows.push({ row: rowNumber + i + 1, cells: row.cells });
        }
        rowNumber += row.repeat;
        row = undefined;
      }
    },
  });
  return sheets;
}

function odpText(xml: string): ReturnType<typeof slidesToText> {
  const slides: Slide[] = [];
  let inNotes = 0;
  walkOdf(xml, {
    open(name) {
      if (name === 'draw:page') slides.push({ paragraphs: [], notes: [] });
      else if (name === 'presentation:notes') inNotes++;
    },
    close(name) {
      if (name === 'presentation:notes') inNotes--;
    },
    paragraph(text) {
      const slide = slides[slides.length - 1];
      if (slide && text) (inNotes > 0 ? slide.notes : slide.paragraphs).push(text);
    },
  });
  return slidesToText(slides);
}
