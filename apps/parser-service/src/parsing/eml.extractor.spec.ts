import { extract, reasonOf, upload } from '../../test/fixtures/extraction.fixtures';

const mail = (body: string, headers = '') =>
  [
    'From: Ada <ada@example.com>',
    'To: Bob <bob@example.com>',
    'Subject: =?UTF-8?Q?Tide_tables_=E2=80=94_June?=',
    'Date: Tue, 03 Jun 2025 10:00:00 +0000',
    'MIME-Version: 1.0',
    headers,
    body,
  ]
    .filter(Boolean)
    .join('\r\n');

const alternative = mail(
  [
    'Content-Type: multipart/mixed; boundary="m"',
    '',
    '--m',
    'Content-Type: multipart/alternative; boundary="a"',
    '',
    '--a',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Low water at noon; bring the cormorant log.',
    '--a',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Low water at <b>noon</b>; bring the cormorant log.</p>',
    '--a--',
    '--m',
    'Content-Type: application/pdf; name="tides.pdf"',
    'Content-Disposition: attachment; filename="tides.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    'JVBERi0xLjcK',
    '--m--',
    '',
  ].join('\r\n'),
);

describe('EML extraction', () => {
  it('reads the subject as heading and title, the headers, the text part and attachment names', async () => {
    expect(await extract(upload('tides.eml', alternative))).toEqual({
      text: [
        '# Tide tables — June',
        'From: "Ada" <ada@example.com>\nTo: "Bob" <bob@example.com>\nDate: 2025-06-03T10:00:00.000Z',
        'Low water at noon; bring the cormorant log.',
        'Attachments: tides.pdf',
      ].join('\n\n'),
      format: 'eml',
      title: 'Tide tables — June',
    });
  });

  it('reads an HTML-only mail as HTML, by its declared type', async () => {
    const html = mail(
      '<h2>Agenda</h2><p>Discuss the <i>razorbill</i> census.</p>',
      'Content-Type: text/html; charset=utf-8\r\n',
    );
    const extracted = await extract(upload('upload', html, 'message/rfc822'));
    expect(extracted.text).toMatch(/## Agenda\n\nDiscuss the razorbill census\.$/);
  });

  it('reads a cut mail as far as it goes, and noise as text or a reason, never a crash', async () => {
    const cut = await extract(upload('cut.eml', alternative.slice(0, 60)));
    expect(cut.text).toBe('From: "Ada" <ada@example.com>\nTo: "Bob" <bob@example.com>');
    const noise = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37) % 256));
    expect(String(await reasonOf(extract(upload('noise.eml', noise))))).toMatch(
      /^(undefined|no_text|parse_error)$/,
    );
  });
});
