import { extract, reasonOf, truncated, upload } from '../../test/fixtures/extraction.fixtures';
import { epub } from '../../test/fixtures/office.fixtures';
import { craftZip } from '../../test/fixtures/zip.fixtures';

describe('EPUB extraction', () => {
  it('reads chapters in spine order, each under a heading, without the navigation document', async () => {
    expect(await extract(upload('almanac.epub', await epub()))).toEqual({
      text: '# Flood\n\nBarnacles close their plates.\n\n# Ebb\n\nThe tide turns at noon.',
      format: 'epub',
      title: 'Sea Almanac',
    });
  });

  it('knows an EPUB by its mimetype entry, whatever its name', async () => {
    expect((await extract(upload('book', await epub()))).format).toBe('epub');
  });

  it('fails a truncated book, and one without a container, as parse_error', async () => {
    expect(await reasonOf(extract(upload('cut.epub', truncated(await epub()))))).toBe(
      'parse_error',
    );
    const bare = craftZip([{ name: 'mimetype', data: Buffer.from('application/epub+zip') }]);
    expect(await reasonOf(extract(upload('bare.epub', bare)))).toBe('parse_error');
  });
});
