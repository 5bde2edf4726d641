import { z } from 'zod';

import type { DocumentView } from './document.model';
import { DocumentError, DocumentErrorCode } from './documents.errors';

/** What a cursor holds: the last document of a page, in the listing's (created_at, id) order. */
const cursorSchema = z.object({ createdAt: z.iso.datetime({ offset: true }), id: z.uuid() });
export type DocumentCursor = z.infer<typeof cursorSchema>;

/** Where a page of documents ends: opaque to clients (base64url JSON). */
export function encodeCursor(document: DocumentView): string {
  return Buffer.from(JSON.stringify({ createdAt: document.createdAt, id: document.id })).toString(
    'base64url',
  );
}

/**
 * The cursor a client sent back, validated whole: a cursor that decodes but holds no timestamp or
 * no UUID is as malformed as one that does not decode (400 invalid_cursor), and never reaches SQL.
 */
export function decodeCursor(cursor: string): DocumentCursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  const parsed = cursorSchema.safeParse(value);
  if (!parsed.success)
    throw new DocumentError(DocumentErrorCode.InvalidCursor, 'cursor is malformed');
  return parsed.data;
}

/** What a cursor of `?externalIdPrefix=` holds: the last external id of a page (byte order). */
const externalIdCursorSchema = z.object({ externalId: z.string().min(1).max(1024) }).strict();

/** Where a page of `?externalIdPrefix=` ends: opaque to clients (base64url JSON). */
export function encodeExternalIdCursor(externalId: string): string {
  return Buffer.from(JSON.stringify({ externalId })).toString('base64url');
}

/** A `?externalIdPrefix=` cursor, validated whole (400 invalid_cursor otherwise). */
export function decodeExternalIdCursor(cursor: string): string {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  const parsed = externalIdCursorSchema.safeParse(value);
  if (!parsed.success)
    throw new DocumentError(DocumentErrorCode.InvalidCursor, 'cursor is malformed');
  return parsed.data.externalId;
}
