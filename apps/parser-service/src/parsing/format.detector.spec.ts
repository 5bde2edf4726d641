import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { extract, reasonOf, upload } from '../../test/fixtures/extraction.fixtures';
import { COMPOUND_FILE_MAGIC } from './doc.extractor';
import { ExtractionError } from './extraction.errors';
import { detectFormat, READ_BY_EXTENSION, SUPPORTED_FORMATS } from './format.detector';

const README = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
/** The README's format list: from its first line to the paragraph on failure reasons. */
const formatList = README.slice(0, README.indexOf('Failure reasons:'));
const named = SUPPORTED_FORMATS.replace(/ or /, ', ').split(', ');

/** A file name of each format the message names that is found by its extension. */
const BY_NAME: Record<string, string> = {
  CSV: 'a.csv',
  TSV: 'a.tsv',
  JSON: 'a.json',
  XML: 'a.xml',
  HTML: 'a.html',
  Markdown: 'a.md',
  PDF: 'a.pdf',
  DOC: 'a.doc',
  DOCX: 'a.docx',
  XLSX: 'a.xlsx',
  PPTX: 'a.pptx',
  ODT: 'a.odt',
  ODS: 'a.ods',
  ODP: 'a.odp',
  EPUB: 'a.epub',
  RTF: 'a.rtf',
  EML: 'a.eml',
  PNG: 'a.png',
  JPEG: 'a.jpg',
  TIFF: 'a.tif',
  WebP: 'a.webp',
};
/** The first bytes of each binary format the detector checks content for. */
const MAGIC: Record<string, Buffer> = {
  PDF: Buffer.from('%PDF-1.7'),
  RTF: Buffer.from('{\\rtf1 x}'),
  DOC: COMPOUND_FILE_MAGIC,
  PNG: Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'),
  JPEG: Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  TIFF: Buffer.from('II*\x00', 'latin1'),
  WebP: Buffer.from('RIFF\x00\x00\x00\x00WEBP', 'latin1'),
};
const IMAGES = new Set(['PNG', 'JPEG', 'TIFF', 'WebP']);
/** The label the message gives each image extension. */
const IMAGE_LABELS: Record<string, string> = {
  png: 'png',
  jpg: 'jpeg',
  jpeg: 'jpeg',
  tif: 'tiff',
  tiff: 'tiff',
  webp: 'webp',
};

describe('the supported-format list', () => {
  it('is what the unsupported_type message says', async () => {
    const error = await extract(upload('a.exe', 'MZ')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ExtractionError);
    expect((error as ExtractionError).message).toContain(SUPPORTED_FORMATS);
    expect(await reasonOf(extract(upload('a.exe', 'MZ')))).toBe('unsupported_type');
  });

  it.each(named)('names %s in the README, and the detector reads it', (format) => {
    expect(formatList).toContain(format === 'text' ? 'plain text' : format);
    const filename = BY_NAME[format];
    if (!filename) return; // text and source code: no one extension
    const body = filename.match(/\.(docx|xlsx|pptx|odt|ods|odp|epub)$/)
      ? Buffer.from([0x50, 0x4b, 0x03, 0x04])
      : (MAGIC[format] ?? Buffer.from('x'));
    expect(detectFormat(upload(filename, body)).format).toBe(
      IMAGES.has(format) ? 'image' : format.toLowerCase(),
    );
  });

  it.each(Object.entries(READ_BY_EXTENSION))(
    'names every extension the detector reads: .%s (%s)',
    (extension, format) => {
      const label = format === 'image' ? IMAGE_LABELS[extension] : format;
      const name = named.find((candidate) => candidate.toLowerCase() === label);
      expect(name).toBeDefined();
      expect(formatList).toContain(name === 'text' ? 'plain text' : name);
    },
  );
});

describe('legacy Office files', () => {
  it('reads a compound file named or declared DOC as DOC', () => {
    expect(detectFormat(upload('memo.doc', COMPOUND_FILE_MAGIC)).format).toBe('doc');
    expect(
      detectFormat({ ...upload('memo', COMPOUND_FILE_MAGIC), contentType: 'application/msword' })
        .format,
    ).toBe('doc');
  });

  it.each(['deck.ppt', 'sheet.xls', 'mail.msg', 'unnamed'])(
    'refuses any other compound file (%s) with unsupported_type naming what to save it as',
    async (filename) => {
      const error = await extract(upload(filename, COMPOUND_FILE_MAGIC)).catch((e: unknown) => e);
      expect(error).toMatchObject({ reason: 'unsupported_type' });
      expect((error as Error).message).toContain('PPTX, XLSX or EML');
    },
  );

  it('refuses a .doc whose content is not a compound file as type_mismatch', async () => {
    expect(await reasonOf(extract(upload('memo.doc', 'plain words')))).toBe('type_mismatch');
  });
});
