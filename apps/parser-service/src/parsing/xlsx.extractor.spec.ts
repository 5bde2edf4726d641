import { Workbook } from 'exceljs';

import {
  extract,
  pageText,
  reasonOf,
  truncated,
  upload,
} from '../../test/fixtures/extraction.fixtures';

async function workbook(): Promise<Buffer> {
  const book = new Workbook();
  const ships = book.addWorksheet('Ships');
  ships.addRow(['Name', 'Port', 'Tons']);
  ships.addRow(['Aurora', 'Brest', 120]);
  ships.addRow(['Borealis', null, 80]);
  ships.mergeCells('A5:B5');
  ships.getCell('A5').value = 'quillwort';
  book.addWorksheet('Empty');
  const crew = book.addWorksheet('Crew');
  crew.addRow(['Role']);
  crew.addRow(['Bosun']);
  return Buffer.from(await book.xlsx.writeBuffer());
}

describe('XLSX extraction', () => {
  it('reads rows as tab-separated lines in a knowledge base whose table mode is text', async () => {
    const input = {
      ...upload('fleet.xlsx', await workbook()),
      settings: { ocr: true, ocrLanguages: [], tableMode: 'text' as const },
    };
    const extracted = await extract(input);
    expect(pageText(extracted, 1)).toBe(
      '# Ships\n\nName\tPort\tTons\nAurora\tBrest\t120\nBorealis\t80\nquillwort',
    );
    expect(pageText(extracted, 3)).toBe('# Crew\n\nRole\nBosun');
  });

  it('reads each sheet under its name, rows as header: value pairs with cell positions', async () => {
    const extracted = await extract(upload('fleet.xlsx', await workbook()));
    expect(extracted.format).toBe('xlsx');
    expect(extracted.text).toBe(
      [
        '# Ships',
        '',
        'Columns (row 1): Name; Port; Tons',
        'Name (A2): Aurora; Port (B2): Brest; Tons (C2): 120',
        'Name (A3): Borealis; Tons (C3): 80',
        'Name (A5): quillwort',
        '',
        '# Crew',
        '',
        'Columns (row 1): Role',
        'Role (A2): Bosun',
      ].join('\n'),
    );
    // Sheets are pages numbered in workbook order; an empty sheet has no page.
    expect(extracted.pages?.map((page) => page.page)).toEqual([1, 3]);
    expect(pageText(extracted, 1)).toMatch(/^# Ships\n[^]*quillwort$/);
    expect(pageText(extracted, 3)).toBe('# Crew\n\nColumns (row 1): Role\nRole (A2): Bosun');
  });

  it('is known by its declared type, and a name alone does not make text XLSX', async () => {
    const type = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
    expect((await extract(upload('upload', await workbook(), type))).format).toBe('xlsx');
    expect(await reasonOf(extract(upload('fake.xlsx', 'Name,Port')))).toBe('type_mismatch');
  });

  it('fails a truncated workbook as parse_error, not a crash', async () => {
    expect(await reasonOf(extract(upload('cut.xlsx', truncated(await workbook()))))).toBe(
      'parse_error',
    );
  });
});
