import type { Extracted } from './extraction.model';

type Page = NonNullable<Extracted['pages']>[number];

/**
 * Builds a document's extracted text block by block (blank-line separated) and records where each
 * page, slide or sheet starts and ends in it, so the offsets of `pages` are exact by construction.
 */
export class TextBuilder {
  private text = '';
  private readonly pages: Page[] = [];
  private open?: { page: number; start?: number };

  /** A block of text; blank ones are dropped, inner newlines kept. */
  block(content: string): void {
    const clean = content.trim();
    if (!clean) return;
    if (this.text) this.text += '\n\n';
    if (this.open && this.open.start === undefined) this.open.start = this.text.length;
    this.text += clean;
  }

  /** A Markdown heading line (`#` × level), so the heading-aware chunkers see it. */
  heading(level: number, title: string): void {
    const line = title.replace(/\s+/g, ' ').trim();
    if (line) this.block(`${'#'.repeat(Math.min(6, Math.max(1, level)))} ${line}`);
  }

  /** Starts page (slide, sheet) `page`; the previous one ends where its last block ended. */
  startPage(page: number): void {
    this.endPage();
    this.open = { page };
  }

  result(): { text: string; pages?: Page[] } {
    this.endPage();
    return { text: this.text, ...(this.pages.length > 0 ? { pages: this.pages } : {}) };
  }

  private endPage(): void {
    if (this.open?.start !== undefined) {
      this.pages.push({ page: this.open.page, start: this.open.start, end: this.text.length });
    }
    this.open = undefined;
  }
}

/** One sheet's non-empty cells by row, each with its 1-based row and column. */
export interface Sheet {
  name: string;
  rows: Array<{ row: number; cells: Array<{ column: number; value: string }> }>;
}

/** `A`, `B`, … `Z`, `AA`: a spreadsheet's name for 1-based column `n`. */
export function columnName(n: number): string {
  let name = '';
  for (let rest = n; rest > 0; rest = Math.floor((rest - 1) / 26)) {
    name = String.fromCharCode(65 + ((rest - 1) % 26)) + name;
  }
  return name;
}

/**
 * Sheets as `# name` sections (one page each, numbered from 1). In `records` mode the first
 * non-empty row is the header; every later row is one line of `header (A2): value` pairs, so a
 * chunk of any rows still names its columns and each value keeps its cell position. In `text`
 * mode every row is one line of its values, tab-separated, as a sheet reads.
 */
export function sheetsToText(
  sheets: Sheet[],
  mode: 'records' | 'text' = 'records',
): { text: string; pages?: Page[] } {
  if (mode === 'text') return sheetsAsText(sheets);
  const out = new TextBuilder();
  sheets.forEach((sheet, index) => {
    if (sheet.rows.length === 0) return;
    out.startPage(index + 1);
    out.heading(1, sheet.name);
    const [header, ...body] = sheet.rows;
    const names = new Map(header!.cells.map((cell) => [cell.column, oneLine(cell.value)]));
    const lines = [
      `Columns (row ${header!.row}): ${header!.cells.map((cell) => oneLine(cell.value)).join('; ')}`,
    ];
    for (const { row, cells } of body) {
      const pairs = cells.map(({ column, value }) => {
        const position = `${columnName(column)}${row}`;
        const name = names.get(column);
        return `${name ? `${name} (${position})` : position}: ${oneLine(value)}`;
      });
      lines.push(pairs.join('; '));
    }
    out.block(lines.join('\n'));
  });
  return out.result();
}

function sheetsAsText(sheets: Sheet[]): { text: string; pages?: Page[] } {
  const out = new TextBuilder();
  sheets.forEach((sheet, index) => {
    if (sheet.rows.length === 0) return;
    out.startPage(index + 1);
    out.heading(1, sheet.name);
    out.block(
      sheet.rows.map(({ cells }) => cells.map((c) => oneLine(c.value)).join('\t')).join('\n'),
    );
  });
  return out.result();
}

/** One slide's paragraphs and its speaker notes' paragraphs. */
export interface Slide {
  paragraphs: string[];
  notes: string[];
}

/** Slides as `# Slide n` sections (page n each), their notes under `## Notes`. */
export function slidesToText(slides: Slide[]): { text: string; pages?: Page[] } {
  const out = new TextBuilder();
  slides.forEach((slide, index) => {
    if (slide.paragraphs.length === 0 && slide.notes.length === 0) return;
    out.startPage(index + 1);
    out.heading(1, `Slide ${index + 1}`);
    slide.paragraphs.forEach((paragraph) => out.block(paragraph));
    if (slide.notes.length > 0) {
      out.heading(2, 'Notes');
      slide.notes.forEach((paragraph) => out.block(paragraph));
    }
  });
  return out.result();
}

const oneLine = (value: string): string => value.replace(/\s+/g, ' ').trim();
