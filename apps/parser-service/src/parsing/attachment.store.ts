import { createHash } from 'node:crypto';

import { MAIL_ATTACHMENTS_REPORT_MAX, type MailAttachments } from '@kb/contracts';
import type { BlobStore } from '@kb/storage';

import type { Extracted } from './extraction.model';

/**
 * Where one attachment of a mail's version is kept until document-service copies it into a
 * document of its own: under the mail's derived prefix, so the mail's deletion (or its next
 * version's indexing) removes it with the rest of what was derived from the mail.
 */
export const attachmentKey = (
  tenantId: string,
  documentId: string,
  version: number,
  index: number,
): string => `derived/${tenantId}/${documentId}/v${version}/attachments/${index}`;

/** Stores the attachments a mail's extraction handed on; answers what the status event reports. */
export async function storeAttachments(
  blobs: BlobStore,
  tenantId: string,
  document: { documentId: string; version: number },
  found: NonNullable<Extracted['attachments']>,
): Promise<MailAttachments> {
  const extracted: MailAttachments['extracted'] = [];
  for (const file of found.files) {
    const body = Buffer.from(file.body.buffer, file.body.byteOffset, file.body.byteLength);
    const contentType = file.contentType || 'application/octet-stream';
    const key = attachmentKey(tenantId, document.documentId, document.version, file.index);
    await blobs.put(key, body, contentType);
    extracted.push({
      index: file.index,
      filename: file.filename,
      contentType,
      sizeBytes: body.length,
      sha256: createHash('sha256').update(body).digest('hex'),
      blob: { bucket: blobs.bucket, key },
    });
  }
  // A mail of thousands of parts: the report names the first skipped ones only.
  return { extracted, skipped: found.skipped.slice(0, MAIL_ATTACHMENTS_REPORT_MAX) };
}
