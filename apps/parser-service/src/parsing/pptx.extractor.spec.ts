import {
  extract,
  pageText,
  reasonOf,
  truncated,
  upload,
} from '../../test/fixtures/extraction.fixtures';
import { pptx } from '../../test/fixtures/office.fixtures';
import { manyEntries } from '../../test/fixtures/zip.fixtures';

describe('PPTX extraction', () => {
  it('reads slides in presentation order with their notes, one page per slide', async () => {
    const extracted = await extract(upload('deck.pptx', await pptx()));
    expect(extracted.format).toBe('pptx');
    expect(extracted.text).toBe(
      [
        '# Slide 1',
        'Harbour charts',
        'Soundings at & low water',
        'marram grass',
        '# Slide 2',
        'Second slide',
        '## Notes',
        'Mention the kelp beds.',
      ].join('\n\n'),
    );
    expect(pageText(extracted, 1)).toMatch(/^# Slide 1\n[^]*marram grass$/);
    expect(pageText(extracted, 2)).toMatch(/^# Slide 2\n[^]*kelp beds\.$/);
  });

  it('fails a truncated deck and a deck without its presentation part as parse_error', async () => {
    expect(await reasonOf(extract(upload('cut.pptx', truncated(await pptx()))))).toBe(
      'parse_error',
    );
    expect(await reasonOf(extract(upload('empty.pptx', manyEntries(2))))).toBe('parse_error');
  });
});
