import { Document, HeadingLevel, Packer, Paragraph } from 'docx';

import { lyingDocx, manyEntries } from '../../test/fixtures/zip.fixtures';
import { ExtractionError } from './extraction.errors';
import type { ExtractInput, ExtractionLimits } from './extraction.model';
import { detectFormat, extractText as extractWithLimits } from './text.extractor';

const LIMITS: ExtractionLimits = {
  maxZipEntries: 100,
  maxInflatedBytes: 64 * 1024 * 1024,
  maxTextChars: 1_000_000,
  maxImagePixels: 40_000_000,
  maxOcrPages: 50,
};
const extractText = (input: ExtractInput, limits: Partial<ExtractionLimits> = {}) =>
  extractWithLimits(input, { ...LIMITS, ...limits });

const BY_DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

const input = (
  filename: string,
  body: string | Buffer,
  contentType = 'application/octet-stream',
) => ({
  filename,
  contentType,
  body: typeof body === 'string' ? Buffer.from(body) : body,
});

async function reasonOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return error instanceof ExtractionError
      ? error.reason
      : `not an ExtractionError: ${String(error)}`;
  }
  return undefined;
}

async function docx(): Promise<Buffer> {
  const document = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: 'Lighthouses', heading: HeadingLevel.HEADING_1 }),
          new Paragraph('Keepers trimmed the wicks every night.'),
          new Paragraph({ text: 'Fog signals', heading: HeadingLevel.HEADING_2 }),
          new Paragraph('Horns sounded twice a minute.'),
        ],
      },
    ],
  });
  return Packer.toBuffer(document);
}

// PDF extraction runs pdf.js, which loads its worker with a dynamic import that Jest's CommonJS
// runtime cannot do: test/pdf.int-spec.ts runs it in a plain Node process on the build output.
describe('extractText', () => {
  it('reads Markdown and plain text as UTF-8, by extension or declared type', async () => {
    expect(await extractText(input('a.md', '# Título\n\nçà'))).toEqual({
      text: '# Título\n\nçà',
      format: 'markdown',
    });
    expect((await extractText(input('notes', 'hello', 'text/plain'))).format).toBe('text');
    expect((await extractText(input('notes.txt', 'hello'))).text).toBe('hello');
  });

  it('reads DOCX with its headings as Markdown heading lines', async () => {
    const extracted = await extractText(input('guide.docx', await docx()));
    expect(extracted.format).toBe('docx');
    expect(extracted.text).toBe(
      '# Lighthouses\n\nKeepers trimmed the wicks every night.\n\n## Fog signals\n\nHorns sounded twice a minute.',
    );
  });

  it('reads HTML visible text with headings, without scripts, and its title', async () => {
    const html =
      '<html><head><title> Tide  tables </title><style>p{}</style></head><body>' +
      '<h2>High water</h2><p>Twice a <b>day</b>.</p><script>alert(1)</script><p>A&amp;B</p></body></html>';
    expect(await extractText(input('tides.html', html))).toEqual({
      text: '## High water\n\nTwice a day.\n\nA&B',
      format: 'html',
      title: 'Tide tables',
    });
  });

  it('reads CSV rows as column: value lines and JSON pretty-printed', async () => {
    const csv = await extractText(input('ships.csv', 'name,port\nAurora,Brest\nBorealis,\n'));
    expect(csv).toEqual({ text: 'name: Aurora; port: Brest\nname: Borealis', format: 'csv' });
    const json = await extractText(input('data.json', '{"a":[1,2]}'));
    expect(json).toEqual({ text: '{\n  "a": [\n    1,\n    2\n  ]\n}', format: 'json' });
  });

  it('reads TSV rows as CSV rows are, and XML as element: text lines', async () => {
    const tsv = await extractText(input('ships.tsv', 'name\tport\nAurora\t"Brest\n'));
    expect(tsv).toEqual({ text: 'name: Aurora; port: "Brest', format: 'tsv' });
    const xml =
      '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "boom">]><catalog><book id="1">' +
      '<title>Tern &amp; Gull</title><note><![CDATA[periwinkle]]></note></book>&x;</catalog>';
    expect(await extractText(input('books.xml', xml))).toEqual({
      text: 'title: Tern & Gull\nnote: periwinkle\ncatalog: &x;',
      format: 'xml',
    });
    expect((await extractText(input('feed', '<a>b</a>', 'application/xml'))).format).toBe('xml');
  });

  it('names the language of source code from the extension', async () => {
    expect(await extractText(input('main.py', 'def f():\n    return 1\n'))).toMatchObject({
      format: 'code',
      language: 'python',
    });
  });

  it('detects the type from the content, not only the name', () => {
    expect(detectFormat(input('upload.bin', Buffer.from('%PDF-1.7 ...')))).toEqual({
      format: 'pdf',
    });
  });

  it.each([
    ['an unknown binary', input('a.exe', 'MZ'), 'unsupported_type'],
    ['NUL bytes in text', input('a.txt', Buffer.from([104, 0, 105])), 'unsupported_type'],
    ['invalid UTF-8', input('a.txt', Buffer.from([0xc3, 0x28])), 'unsupported_type'],
    ['whitespace only', input('a.txt', ' \n\t '), 'no_text'],
    ['a PDF name on text', input('report.pdf', 'not a pdf at all'), 'type_mismatch'],
    ['a declared DOCX that is text', input('x', 'hello', BY_DOCX), 'type_mismatch'],
    ['malformed CSV', input('bad.csv', 'a,b\n"unterminated'), 'parse_error'],
    ['malformed JSON', input('bad.json', '{"a":'), 'parse_error'],
    ['binary named XML', input('bad.xml', Buffer.from([0x3c, 0, 0xff])), 'unsupported_type'],
    ['binary named TSV', input('bad.tsv', Buffer.from([0xc3, 0x28])), 'unsupported_type'],
  ])('fails %s with a reason code', async (_name, file, reason) => {
    expect(await reasonOf(extractText(file))).toBe(reason);
  });

  // The two decompression bombs inflate tens of MB, seconds each: test/zip-bombs.int-spec.ts.

  it('refuses an archive with more entries than the limit (entry-count bomb)', async () => {
    expect(await reasonOf(extractText(input('many.docx', manyEntries(101))))).toBe('too_large');
    // At the limit the archive is read (and fails for what it is: no document inside).
    expect(await reasonOf(extractText(input('many.docx', manyEntries(100))))).toBe('parse_error');
  });

  it.each(['xlsx', 'pptx', 'odt', 'ods', 'odp', 'epub'])(
    'counts a .%s archive through the same guard before its reader opens it',
    async (extension) => {
      expect(await reasonOf(extractText(input(`many.${extension}`, manyEntries(101))))).toBe(
        'too_large',
      );
      const bomb = lyingDocx(2 * 1024 * 1024);
      expect(
        await reasonOf(
          extractText(input(`bomb.${extension}`, bomb), { maxInflatedBytes: 1024 * 1024 }),
        ),
      ).toBe('too_large');
    },
  );

  it('refuses extracted text longer than the limit (output bound)', async () => {
    const text = 'word '.repeat(1000);
    expect(await reasonOf(extractText(input('long.txt', text), { maxTextChars: 4999 }))).toBe(
      'too_large',
    );
    expect((await extractText(input('long.txt', text), { maxTextChars: 5000 })).text).toBe(text);
  });
});
