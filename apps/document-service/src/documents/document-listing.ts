import { type DocumentFilterNode, FilterError, parseDocumentFilter } from '@kb/contracts';
import { z } from 'zod';

import { DocumentError, DocumentErrorCode } from './documents.errors';

/** The longest `where` a listing takes (characters of its JSON). */
export const WHERE_MAX_LENGTH = 800;

/** `GET /v1/documents` and `GET /v1/knowledge-bases/{id}/documents`. */
export const listQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    /** Opaque, base64url (document.cursor.ts); one holds about 110 characters. */
    cursor: z.string().max(200).optional(),
    /**
     * A filter of the one language (docs/adr/0007) over document fields, as JSON. Bounded so that
     * a request line with every parameter at its longest (where, cursor, externalIdPrefix) stays
     * under Node's 16 KiB header limit even percent-encoded (up to 12 bytes a character): past that
     * limit Node answers 431 and resets the connection before any route.
     */
    where: z.string().max(WHERE_MAX_LENGTH).optional(),
  })
  .strict();

/** The longest `?externalIdPrefix=` cursor: an external id of 1024 UTF-16 units, as base64url. */
const EXTERNAL_ID_CURSOR_MAX = 4400;

/**
 * `GET /v1/documents`: a page, or (`externalIdPrefix`) a page of what a sync brought, in
 * external-id order. Its cursor holds an external id, so it may be longer than a listing's (still
 * base64url: never percent-encoded, so the request line stays under Node's header limit).
 */
export const documentListQuerySchema = listQuerySchema
  .extend({
    externalIdPrefix: z.string().min(1).max(200).optional(),
    cursor: z.string().max(EXTERNAL_ID_CURSOR_MAX).optional(),
  })
  .refine((q) => q.externalIdPrefix === undefined || q.where === undefined, {
    message: 'where cannot be combined with externalIdPrefix',
    path: ['where'],
  })
  .refine((q) => q.externalIdPrefix !== undefined || (q.cursor?.length ?? 0) <= 200, {
    message: 'Too big: expected string to have <=200 characters',
    path: ['cursor'],
  });

/**
 * The `where` of a listing, parsed: JSON that is not a filter of the language (an unknown field
 * or operator, a range over strings…) is 400 `invalid_filter`, naming where it is wrong.
 */
export function parseWhere(where: string | undefined): DocumentFilterNode | undefined {
  if (where === undefined || where.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(where);
  } catch {
    throw new DocumentError(DocumentErrorCode.InvalidFilter, 'where is not valid JSON');
  }
  try {
    return parseDocumentFilter(value);
  } catch (error) {
    if (error instanceof FilterError) {
      throw new DocumentError(DocumentErrorCode.InvalidFilter, error.message);
    }
    throw error;
  }
}
