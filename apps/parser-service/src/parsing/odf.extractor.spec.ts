import {
  extract,
  pageText,
  reasonOf,
  truncated,
  upload,
} from '../../test/fixtures/extraction.fixtures';
import { odp, ods, odt } from '../../test/fixtures/office.fixtures';

describe('OpenDocument extraction', () => {
  it('reads ODT paragraphs with headings as # lines, without deleted text', async () => {
    const extracted = await extract(upload('tides.odt', await odt()));
    expect(extracted).toEqual({
      text: '## Tides\n\nSpring tides bring samphire.',
      format: 'odt',
    });
  });

  it('reads ODS sheets as XLSX: header: value pairs with cell positions, repeats counted', async () => {
    const extracted = await extract(upload('catch.ods', await ods()));
    expect(extracted.format).toBe('ods');
    expect(extracted.text).toBe(
      [
        '# Catch',
        '',
        'Columns (row 1): Fish; Kg',
        'Fish (A1002): gurnard; Kg (B1002): 4; C1002: 4',
        '',
        '# Notes',
        '',
        'Columns (row 1): Calm sea',
      ].join('\n'),
    );
    expect(pageText(extracted, 2)).toBe('# Notes\n\nColumns (row 1): Calm sea');
  });

  it('reads ODP pages as slides with their notes', async () => {
    const extracted = await extract(upload('deck.odp', await odp()));
    expect(extracted.format).toBe('odp');
    expect(extracted.text).toBe(
      '# Slide 1\n\nLighthouse keepers\n\n# Slide 2\n\nFog horns\n\n## Notes\n\nSay bladderwrack',
    );
    expect(pageText(extracted, 2)).toMatch(/^# Slide 2[^]*bladderwrack$/);
  });

  it('knows an OpenDocument file by its mimetype entry, whatever its name', async () => {
    expect((await extract(upload('upload.bin', await odt()))).format).toBe('odt');
    expect((await extract(upload('upload.zip', await ods()))).format).toBe('ods');
  });

  it.each([
    ['ODT', 'cut.odt', odt],
    ['ODS', 'cut.ods', ods],
    ['ODP', 'cut.odp', odp],
  ])('fails a truncated %s as parse_error', async (_name, filename, make) => {
    expect(await reasonOf(extract(upload(filename, truncated(await make()))))).toBe('parse_error');
  });
});
