/**
 * One small file per format the parser reads, each made here by a library that writes the format
 * (exceljs, pptxgenjs, docx, pdf-lib, nodemailer's composer, JSZip for the OpenDocument and EPUB
 * containers, @napi-rs/canvas for rendered text, cfb for DOC's compound file), never by the parser under test. Each carries
 * a unique word on a known page (slide, sheet) so a search can point back into it.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

import { word97 } from '@kb/parser-service/testing';
import { createCanvas } from '@napi-rs/canvas';
import { Document, Packer, Paragraph } from 'docx';
import { Workbook } from 'exceljs';
import JSZip from 'jszip';
import { PDFDocument, StandardFonts } from 'pdf-lib';

export interface FormatFile {
  filename: string;
  type: string;
  body: Buffer;
  /** The unique word, and the page (slide, sheet) it is on; undefined for formats without pages. */
  word: string;
  page?: number;
}

/**
 * Sentences put before a page's unique word: longer than a chunk of the e2e suites (300), so the
 * chunk holding the word starts on the word's page (a hit names the page its chunk starts on).
 */
const filler = (lines: number) =>
  Array.from({ length: lines }, (_, i) => `Tide table line ${i + 1} rose over the wall.`);

/** A paragraph of ordinary prose, letters, digits and punctuation, for OCR accuracy. */
export const PARAGRAPH =
  'Knowledge managers upload what their organisation holds: slide decks, spreadsheets, scanned ' +
  'contracts and photos of whiteboards. The parser reads images and PDF pages without a text ' +
  'layer through optical character recognition, page by page, in 2026 as in 1996; it flags ' +
  'every page it cannot read with confidence (below 60 of 100) instead of indexing noise.';

/**
 * `text` drawn black on white as a PNG, wrapped to the width: about what a 200 dpi scan of 12 pt
 * type looks like.
 */
export function renderedText(text: string, width = 1700): Buffer {
  const fontPx = 34;
  const measure = createCanvas(width, 10).getContext('2d');
  measure.font = `${fontPx}px sans-serif`;
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    const candidate = line ? `${line} ${word}` : word;
    if (line && measure.measureText(candidate).width > width - 2 * fontPx) {
      lines.push(line);
      line = word;
    } else line = candidate;
  }
  if (line) lines.push(line);
  const height = Math.round((lines.length + 2) * fontPx * 1.5);
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = 'white';
  context.fillRect(0, 0, width, height);
  context.fillStyle = 'black';
  context.font = `${fontPx}px sans-serif`;
  lines.forEach((text, i) => context.fillText(text, fontPx, (i + 1.5) * fontPx * 1.5));
  return canvas.toBuffer('image/png');
}

/**
 * Character accuracy: 1 − (edit distance ÷ length of the expected text), runs of white space
 * counted as one space on both sides (line breaks are layout, not characters).
 */
export function characterAccuracy(expected: string, actual: string): number {
  const a = expected.replace(/\s+/g, ' ').trim();
  const b = actual.replace(/\s+/g, ' ').trim();
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, substitution));
    }
    previous = row;
  }
  return 1 - previous[b.length]! / a.length;
}

async function xlsx(word: string, lines: string[]): Promise<Buffer> {
  const book = new Workbook();
  book.addWorksheet('Ports').addRows([['Port'], ['Brest']]);
  book
    .addWorksheet('Cargo')
    .addRows([['Item', 'Tons'], ...lines.map((line) => [line, 1]), [word, 12]]);
  return Buffer.from(await book.xlsx.writeBuffer());
}

/**
 * pptxgenjs imports Node's modules dynamically, which Jest's module sandbox refuses: the deck is
 * written by a plain Node process.
 */
function pptx(word: string, lines: string[]): Buffer {
  const script = `
    const PptxGenJS = require('pptxgenjs');
    const deck = new PptxGenJS();
    deck.addSlide().addText('Opening slide', { x: 1, y: 1, w: 6, h: 1 });
    const second = deck.addSlide();
    second.addText(${JSON.stringify([...lines, `The ${word} forecast`].join(' '))}, { x: 1, y: 1, w: 8, h: 4 });
    second.addNotes('Speaker notes of the second slide.');
    deck.write({ outputType: 'nodebuffer' }).then((b) => process.stdout.write(b.toString('base64')));`;
  return Buffer.from(execFileSync(process.execPath, ['-e', script]).toString(), 'base64');
}

async function docx(word: string, lines: string[]): Promise<Buffer> {
  const document = new Document({
    sections: [
      {
        children: [...lines, `The ${word} clause of the charter.`].map((t) => new Paragraph(t)),
      },
    ],
  });
  return Packer.toBuffer(document);
}

async function pdf(word: string, lines: string[]): Promise<Buffer> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  document.addPage().drawText('Cover page.', { x: 50, y: 700, size: 14, font });
  document.addPage().drawText([...lines, `The ${word} appendix.`].join('\n'), {
    x: 50,
    y: 760,
    size: 10,
    lineHeight: 12,
    font,
  });
  return Buffer.from(await document.save());
}

/** A one-page PDF that is a picture of its text: no text layer, as a scanner makes it. */
async function scannedPdf(text: string): Promise<Buffer> {
  const document = await PDFDocument.create();
  const scan = await document.embedPng(renderedText(text));
  const page = document.addPage([612, 612 * (scan.height / scan.width)]);
  page.drawImage(scan, { x: 0, y: 0, width: page.getWidth(), height: page.getHeight() });
  return Buffer.from(await document.save());
}

const ODF_NS =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ' +
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" ' +
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" ' +
  'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"';

/** An OpenDocument package: the `mimetype` entry first and stored, then its content. */
async function odf(kind: 'text' | 'spreadsheet' | 'presentation', body: string): Promise<Buffer> {
  const zip = new JSZip();
  zip.file('mimetype', `application/vnd.oasis.opendocument.${kind}`, { compression: 'STORE' });
  zip.file(
    'content.xml',
    `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${ODF_NS}><office:body><office:${kind}>${body}</office:${kind}></office:body></office:document-content>`,
  );
  zip.file(
    'META-INF/manifest.xml',
    '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"/>',
  );
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

const paragraphs = (lines: string[]) => lines.map((l) => `<text:p>${l}</text:p>`).join('');

const row = (...cells: string[]) =>
  `<table:table-row>${cells.map((c) => `<table:table-cell><text:p>${c}</text:p></table:table-cell>`).join('')}</table:table-row>`;

async function epub(word: string, lines: string[]): Promise<Buffer> {
  const zip = new JSZip();
  zip.file('mimetype', 'application/epub+zip', { compression: 'STORE' });
  zip.file(
    'META-INF/container.xml',
    '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/book.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
  );
  zip.file(
    'OEBPS/book.opf',
    '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Logbook</dc:title></metadata><manifest><item id="c1" href="one.xhtml" media-type="application/xhtml+xml"/><item id="c2" href="two.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>',
  );
  const chapter = (title: string, text: string) =>
    `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;
  zip.file('OEBPS/one.xhtml', chapter('Departure', lines.join(' ')));
  zip.file('OEBPS/two.xhtml', chapter('Arrival', `The ${word} harbour at dusk.`));
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

async function eml(word: string, lines: string[]): Promise<Buffer> {
  // nodemailer's RFC 5322 composer (a dependency of mailparser): no types are published for it.
  const require = createRequire(__filename);
  const MailComposer = require('nodemailer/lib/mail-composer') as new (mail: object) => {
    compile(): { build(): Promise<Buffer> };
  };
  return new MailComposer({
    from: 'ana@example.com',
    to: 'ops@example.com',
    subject: 'Harbour report',
    text: [...lines, `The ${word} arrived on time.`].join('\n'),
  })
    .compile()
    .build();
}

/**
 * Every format with its unique word (the last two read by OCR). `fillerLines` sentences come
 * before the word on its page: 50 for the e2e suites, more to time the parser on larger files.
 */
export async function formatFiles(fillerLines = 50): Promise<FormatFile[]> {
  const lines = filler(fillerLines);
  return [
    {
      filename: 'cargo.xlsx',
      type: 'application/octet-stream',
      body: await xlsx('quillbarrow', lines),
      word: 'quillbarrow',
      page: 2,
    },
    {
      filename: 'forecast.pptx',
      type: 'application/octet-stream',
      body: pptx('brindlewick', lines),
      word: 'brindlewick',
      page: 2,
    },
    {
      filename: 'charter.docx',
      type: 'application/octet-stream',
      body: await docx('tamberline', lines),
      word: 'tamberline',
    },
    {
      filename: 'minutes.doc',
      type: 'application/msword',
      body: word97([...lines, 'The quorveldt motion carried.']),
      word: 'quorveldt',
    },
    {
      filename: 'appendix.pdf',
      type: 'application/pdf',
      body: await pdf('corvantis', lines),
      word: 'corvantis',
      page: 2,
    },
    {
      filename: 'memo.odt',
      type: 'application/octet-stream',
      body: await odf(
        'text',
        `<text:h text:outline-level="1">Memo</text:h>${paragraphs(lines)}<text:p>The plovendash memo.</text:p>`,
      ),
      word: 'plovendash',
    },
    {
      filename: 'stock.ods',
      type: 'application/octet-stream',
      body: await odf(
        'spreadsheet',
        `<table:table table:name="Empty">${row('Nothing')}${row('here')}</table:table><table:table table:name="Stock">${row('Item')}${lines.map((line) => row(line)).join('')}${row('gravelmoot')}</table:table>`,
      ),
      word: 'gravelmoot',
      page: 2,
    },
    {
      filename: 'deck.odp',
      type: 'application/octet-stream',
      body: await odf(
        'presentation',
        `<draw:page><text:p>First</text:p></draw:page><draw:page>${lines.map((line) => `<text:p>${line}</text:p>`).join('')}<text:p>The sprockhaven slide</text:p></draw:page>`,
      ),
      word: 'sprockhaven',
      page: 2,
    },
    {
      filename: 'logbook.epub',
      type: 'application/epub+zip',
      body: await epub('windlemere', lines),
      word: 'windlemere',
    },
    {
      filename: 'memo.rtf',
      type: 'application/rtf',
      body: Buffer.from(
        `{\\rtf1\\ansi{\\fonttbl{\\f0 Helvetica;}}\\f0 ${lines.map((l) => `${l}\\par `).join('')}The fenwickard note.\\par}`,
      ),
      word: 'fenwickard',
    },
    {
      filename: 'report.eml',
      type: 'message/rfc822',
      body: await eml('harrowgate', lines),
      word: 'harrowgate',
    },
    {
      filename: 'catalogue.xml',
      type: 'application/xml',
      body: Buffer.from(
        `<catalogue>${lines.map((l) => `<item><name>${l}</name></item>`).join('')}<item><name>mossgrindle</name></item></catalogue>`,
      ),
      word: 'mossgrindle',
    },
    {
      filename: 'crew.tsv',
      type: 'text/tab-separated-values',
      body: Buffer.from(
        `name\trole\n${lines.map((l) => `${l}\tdeckhand\n`).join('')}ortolvane\tbosun\n`,
      ),
      word: 'ortolvane',
    },
    {
      filename: 'scan.pdf',
      type: 'application/pdf',
      body: await scannedPdf('Quarterly lighthouse inspection report'),
      word: 'lighthouse',
      page: 1,
    },
    {
      filename: 'whiteboard.png',
      type: 'image/png',
      body: renderedText('Sprint planning for the zeppelin hangar'),
      word: 'zeppelin',
      page: 1,
    },
  ];
}
