import type { DocumentView } from './document.model';
import { DocumentError, DocumentErrorCode } from './documents.errors';

/** Where a page of documents ends: opaque to clients (base64url JSON). */
export function encodeCursor(document: DocumentView): string {
  return Buffer.from(JSON.stringify({ createdAt: document.createdAt, id: document.id })).toString(
    'base64url',
  );
}

export function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      typeof value === 'object' &&
      value !== null &&
      typeof (value as { createdAt?: unknown }).createdAt === 'string' &&
      typeof (value as { id?: unknown }).id === 'string'
    ) {
      return value as { createdAt: string; id: string };
    }
  } catch {
    // fall through to the error below
  }
  throw new DocumentError(DocumentErrorCode.InvalidCursor, 'cursor is malformed');
}
