import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { PDFDocument, StandardFonts } from 'pdf-lib';

/**
 * PDF extraction on the real runtime: pdf.js loads its worker through a dynamic import, which
 * Node does and Jest's CommonJS sandbox does not, so the built extractor runs in a child Node
 * process (`npm test` builds before it tests).
 */
const EXTRACTOR = join(__dirname, '..', 'dist', 'parsing', 'text.extractor.js');

function extractInNode(
  filename: string,
  body: Buffer,
): { ok: boolean; value: Record<string, unknown> } {
  const script = `
    const { extractText } = require(${JSON.stringify(EXTRACTOR)});
    const body = Buffer.from(process.argv[1], 'base64');
    extractText({ filename: ${JSON.stringify(filename)}, contentType: 'application/octet-stream', body })
      .then((v) => process.stdout.write(JSON.stringify({ ok: true, value: v })))
      .catch((e) => process.stdout.write(JSON.stringify({ ok: false, value: { reason: e.reason, message: e.message } })));
  `;
  const result = spawnSync(process.execPath, ['-e', script, body.toString('base64')], {
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout) as { ok: boolean; value: Record<string, unknown> };
}

async function pdf(pages: string[]): Promise<Buffer> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (const text of pages) document.addPage().drawText(text, { x: 50, y: 700, size: 14, font });
  document.setTitle('Field notes');
  return Buffer.from(await document.save());
}

describe('PDF extraction (pdf-parse on pdf.js, in Node)', () => {
  it('reads every page with its offsets and the document title', async () => {
    const { ok, value } = extractInNode(
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
      extractInNode('broken.pdf', Buffer.from('%PDF-1.7\n%garbage without objects')),
    ).toMatchObject({
      ok: false,
      value: { reason: 'parse_error' },
    });
    expect(extractInNode('blank.pdf', await pdf(['']))).toMatchObject({
      ok: false,
      value: { reason: 'no_text' },
    });
  });

  it('fails a password-protected PDF as encrypted, with a message that says so', () => {
    // fixtures/encrypted.pdf: one page of text, AES-128 with a user password (made with pypdf).
    const encrypted = readFileSync(join(__dirname, 'fixtures', 'encrypted.pdf'));
    expect(extractInNode('board-minutes.pdf', encrypted)).toEqual({
      ok: false,
      value: { reason: 'encrypted', message: '"board-minutes.pdf" is encrypted' },
    });
  });
});
