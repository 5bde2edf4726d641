import type JSZip from 'jszip';

import { ExtractionError } from './extraction.errors';

export interface ZipLimits {
  /** Entries an archive may hold (directories included). */
  maxZipEntries: number;
  /** Bytes all entries together may inflate to, counted while inflating. */
  maxInflatedBytes: number;
}

/**
 * Opens a ZIP container (DOCX, XLSX, PPTX, OpenDocument, EPUB) and inflates every entry once, counting the bytes as they come
 * out, so an archive is refused before anything reads it whole. The sizes the central directory
 * declares are never trusted: an attacker writes them (review H1), and JSZip only compares them
 * with the real ones after inflating everything. Entries are inflated by the same JSZip that
 * mammoth reads the archive with, so what is counted here is what mammoth would inflate.
 * Too many entries or too many bytes is `too_large`; an unreadable archive is `parse_error`.
 * Returns the archive it counted, so readers of the other containers read exactly those entries.
 */
export async function inspectZip(
  body: Buffer,
  limits: ZipLimits,
  filename: string,
): Promise<JSZip> {
  const JSZipClass = (await import('jszip')).default;
  let zip: JSZip;
  try {
    zip = await JSZipClass.loadAsync(body);
  } catch (error) {
    throw unreadable(filename, error);
  }
  const entries = Object.values(zip.files);
  if (entries.length > limits.maxZipEntries) {
    throw new ExtractionError(
      'too_large',
      `"${filename}" holds ${entries.length} entries, over the ${limits.maxZipEntries} limit`,
    );
  }
  let inflated = 0;
  for (const entry of entries) {
    if (entry.dir) continue;
    inflated = await countInflated(entry, inflated, limits.maxInflatedBytes, filename);
  }
  return zip;
}

/** Inflates one entry chunk by chunk, adding to `counted`; stops at the first byte over `max`. */
function countInflated(
  entry: JSZip.JSZipObject,
  counted: number,
  max: number,
  filename: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    let total = counted;
    const stream = entry.nodeStream('nodebuffer');
    stream
      .on('data', (chunk: Buffer) => {
        total += chunk.length;
        if (total <= max) return;
        // Unread, the stream fills its buffer and pauses JSZip's inflater: nothing more is inflated.
        stream.pause();
        stream.removeAllListeners('data');
        reject(
          new ExtractionError(
            'too_large',
            `"${filename}" inflates past the ${max}-byte limit (at "${entry.name}")`,
          ),
        );
      })
      .on('error', (error: unknown) => reject(unreadable(filename, error)))
      .on('end', () => resolve(total));
  });
}

const unreadable = (filename: string, error: unknown): ExtractionError =>
  new ExtractionError(
    'parse_error',
    `"${filename}" is not a readable archive: ${error instanceof Error ? error.message : String(error)}`,
  );
