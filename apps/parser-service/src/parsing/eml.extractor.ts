import { ExtractionError } from './extraction.errors';
import type { Extracted, ExtractInput } from './extraction.model';
import { htmlToText } from './html.extractor';
import { selectAttachments } from './mail-attachments';
import { TextBuilder } from './text.builder';

/**
 * A saved mail (RFC 822, mailparser): the subject as a `#` heading and the title, a header block
 * (from, to, cc, date), then the body: its text part, or its HTML part read as HTML when it has no
 * text part (the two are usually alternatives of one body). Attachments are named; with
 * `input.attachments`, those the parser reads are also handed on as files (docs/adr/0048).
 */
export async function extractEml(input: ExtractInput): Promise<Extracted> {
  // mailparser is CommonJS: through import() its module is the `default` export.
  const { simpleParser } = (await import('mailparser')).default;
  let mail: Awaited<ReturnType<typeof simpleParser>>;
  try {
    mail = await simpleParser(input.body, {
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      skipImageLinks: true,
    });
  } catch (error) {
    throw new ExtractionError(
      'parse_error',
      `"${input.filename}" is not a readable mail: ${String(error)}`,
    );
  }
  const out = new TextBuilder();
  const subject = mail.subject?.replace(/\s+/g, ' ').trim();
  if (subject) out.heading(1, subject);
  const addresses = (value: typeof mail.to) =>
    (Array.isArray(value) ? value : value ? [value] : []).map((entry) => entry.text).join(', ');
  out.block(
    [
      ['From', addresses(mail.from)],
      ['To', addresses(mail.to)],
      ['Cc', addresses(mail.cc)],
      ['Date', mail.date?.toISOString() ?? ''],
    ]
      .filter(([, value]) => value)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n'),
  );
  const body = mail.text?.trim() ? mail.text : mail.html ? htmlToText(mail.html).text : '';
  out.block(body.replace(/\r\n?/g, '\n'));
  const attached = mail.attachments.map((attachment) => attachment.filename).filter(Boolean);
  if (attached.length > 0) out.block(`Attachments: ${attached.join(', ')}`);
  return {
    text: out.result().text,
    format: 'eml',
    ...(subject ? { title: subject } : {}),
    ...(input.attachments
      ? { attachments: selectAttachments(mail.attachments, input.attachments) }
      : {}),
  };
}
