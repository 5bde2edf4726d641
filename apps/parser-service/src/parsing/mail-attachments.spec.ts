import { extract, upload } from '../../test/fixtures/extraction.fixtures';
import { composeMail, PDF_HEAD } from '../../test/fixtures/mail.fixtures';
import type { AttachmentLimits } from './extraction.model';

const LIMITS: AttachmentLimits = { max: 5, maxBytes: 1024 };
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1');

const read = async (mail: Buffer, attachments: AttachmentLimits | null = LIMITS) =>
  extract({
    ...upload('papers.eml', mail, 'message/rfc822'),
    ...(attachments ? { attachments } : {}),
  });

describe("a mail's attachments", () => {
  it('hands on those the parser reads, with their bytes, and skips the rest with a reason', async () => {
    const nested = await composeMail([], { text: 'A forwarded note.' });
    const mail = await composeMail(
      [
        { filename: 'tides.pdf', content: PDF_HEAD, contentType: 'application/pdf' },
        { filename: 'notes.md', content: '# Notes\n\nThe razorbill count.' },
        { filename: 'logo.gif', content: GIF, contentType: 'image/gif' },
        { filename: 'big.txt', content: 'x'.repeat(LIMITS.maxBytes + 1) },
        {
          filename: 'forwarded.eml',
          content: nested,
          contentType: 'message/rfc822',
          contentDisposition: 'attachment',
        },
        { filename: 'empty.txt', content: '' },
      ],
      { html: '<p>Papers attached.</p><img src="cid:sig@x">' },
    );
    const extracted = await read(mail);
    expect(extracted.text).toContain('Attachments: tides.pdf, notes.md, logo.gif, big.txt');
    const { files, skipped } = extracted.attachments!;
    expect(
      files.map(({ index, filename, contentType }) => ({ index, filename, contentType })),
    ).toEqual([
      { index: 0, filename: 'tides.pdf', contentType: 'application/pdf' },
      { index: 1, filename: 'notes.md', contentType: 'text/markdown' },
      // An attached mail is one too (its own attachments are then only named: one level deep).
      { index: 4, filename: 'forwarded.eml', contentType: 'message/rfc822' },
    ]);
    expect(Buffer.from(files[0]!.body)).toEqual(PDF_HEAD);
    expect(Buffer.from(files[1]!.body).toString()).toBe('# Notes\n\nThe razorbill count.');
    expect(skipped).toEqual([
      { index: 2, filename: 'logo.gif', reason: 'unsupported_type' },
      { index: 3, filename: 'big.txt', reason: 'too_large' },
      { index: 5, filename: 'empty.txt', reason: 'empty' },
    ]);
  });

  it('skips an inline image of the body, which is no attachment of its own', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const mail = await composeMail(
      [{ filename: 'sig.png', content: png, contentType: 'image/png', cid: 'sig@x' }],
      { html: '<p>Regards</p><img src="cid:sig@x">' },
    );
    expect((await read(mail)).attachments).toEqual({
      files: [],
      skipped: [{ index: 0, filename: 'sig.png', reason: 'inline' }],
    });
  });

  it("hands on at most `max`, in the mail's order, and skips the others as too_many", async () => {
    const mail = await composeMail(
      Array.from({ length: 4 }, (_, i) => ({ filename: `part-${i}.txt`, content: `part ${i}` })),
    );
    const { files, skipped } = (await read(mail, { max: 2, maxBytes: 1024 })).attachments!;
    expect(files.map((file) => file.index)).toEqual([0, 1]);
    expect(skipped).toEqual([
      { index: 2, filename: 'part-2.txt', reason: 'too_many' },
      { index: 3, filename: 'part-3.txt', reason: 'too_many' },
    ]);
  });

  it('only names them when not asked for them (an attachment of an attachment)', async () => {
    const mail = await composeMail([{ filename: 'tides.pdf', content: PDF_HEAD }]);
    const extracted = await read(mail, null);
    expect(extracted.attachments).toBeUndefined();
    expect(extracted.text).toContain('Attachments: tides.pdf');
  });

  it('reports an empty list for a mail without attachments, so a new version clears the old', async () => {
    const mail = await composeMail([]);
    expect((await read(mail)).attachments).toEqual({ files: [], skipped: [] });
  });
});
