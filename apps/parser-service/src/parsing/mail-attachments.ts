import { ExtractionError } from './extraction.errors';
import type {
  AttachmentFile,
  AttachmentLimits,
  Extracted,
  SkippedAttachment,
} from './extraction.model';
import { detectFormat } from './format.detector';

/** What the mail parser gives of one attachment (mailparser's `Attachment`, the parts used). */
export interface MailPart {
  filename?: string | undefined;
  contentType: string;
  content: Buffer;
  /** Part of a `multipart/related` body (an inline image the HTML shows), not an attachment. */
  related?: boolean | undefined;
}

/**
 * A part's file name, its last 255 characters (the extension kept); for a part that has none, its
 * place, and `.eml` when it is a mail.
 */
const nameOf = (part: MailPart, index: number): string =>
  part.filename?.trim().slice(-255) ||
  `attachment-${index + 1}${part.contentType === 'message/rfc822' ? '.eml' : ''}`;

/**
 * Which of a mail's attachments become documents of their own (docs/adr/0048): those of a format
 * the parser reads (the same detector as an upload's, so what is handed on will parse), each at
 * most `maxBytes`, the first `max` of them in the mail's order. Every other one is skipped with a
 * reason: its bytes are never handed on.
 */
export function selectAttachments(
  parts: MailPart[],
  limits: AttachmentLimits,
): NonNullable<Extracted['attachments']> {
  const files: AttachmentFile[] = [];
  const skipped: SkippedAttachment[] = [];
  parts.forEach((part, index) => {
    const filename = nameOf(part, index);
    const skip = (reason: SkippedAttachment['reason']) => skipped.push({ index, filename, reason });
    if (part.related) return skip('inline');
    if (part.content.length === 0) return skip('empty');
    if (part.content.length > limits.maxBytes) return skip('too_large');
    try {
      detectFormat({ filename, contentType: part.contentType, body: part.content });
    } catch (error) {
      if (error instanceof ExtractionError) return skip('unsupported_type');
      throw error;
    }
    if (files.length >= limits.max) return skip('too_many');
    files.push({
      index,
      filename,
      contentType: part.contentType,
      body: new Uint8Array(part.content),
    });
  });
  return { files, skipped };
}
