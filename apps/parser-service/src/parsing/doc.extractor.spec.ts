import * as CFB from 'cfb';

import { extract, reasonOf, upload } from '../../test/fixtures/extraction.fixtures';
import { word97 } from '../testing/word97';

describe('DOC (Word 97-2003)', () => {
  it('reads the paragraphs of a binary Word document, one block each', async () => {
    const body = word97(['Harbour charter', 'The marrowfield clause binds.', 'Café déjà vu']);
    const extracted = await extract(upload('charter.doc', body));
    expect(extracted).toEqual({
      format: 'doc',
      text: 'Harbour charter\n\nThe marrowfield clause binds.\n\nCafé déjà vu',
    });
  });

  it('fails an encrypted document with `encrypted`, before reading its text', async () => {
    const body = word97(['secret']);
    const container = CFB.read(body, { type: 'buffer' });
    const stream = CFB.find(container, 'WordDocument')!;
    const content = Buffer.from(stream.content as Uint8Array);
    content.writeUInt16LE(content.readUInt16LE(0x0a) | 0x0100, 0x0a);
    stream.content = content;
    const encrypted = Buffer.from(CFB.write(container, { type: 'buffer' }) as Uint8Array);
    expect(await reasonOf(extract(upload('secret.doc', encrypted)))).toBe('encrypted');
  });

  it('fails a compound file without a WordDocument stream, or cut short, with parse_error', async () => {
    const container = CFB.utils.cfb_new();
    CFB.utils.cfb_add(container, '/Other', Buffer.from('x'));
    const other = Buffer.from(CFB.write(container, { type: 'buffer' }) as Uint8Array);
    expect(await reasonOf(extract(upload('other.doc', other)))).toBe('parse_error');
    const body = word97(['The marrowfield clause binds.']);
    expect(await reasonOf(extract(upload('cut.doc', body.subarray(0, 600))))).toBe('parse_error');
  });
});
