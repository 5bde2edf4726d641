import {
  KnowledgeBaseError,
  KnowledgeBaseErrorCode,
} from '../knowledge-bases/knowledge-bases.errors';

/** Where a page of knowledge bases ends: the last id, opaque to clients (base64url JSON). */
export const encodeKnowledgeBaseCursor = (id: string): string =>
  Buffer.from(JSON.stringify({ id })).toString('base64url');

/** The id a cursor holds; a malformed one is 400 `invalid_cursor`. */
export function decodeKnowledgeBaseCursor(cursor: string): string {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      typeof value === 'object' &&
      value !== null &&
      typeof (value as { id?: unknown }).id === 'string'
    ) {
      return (value as { id: string }).id;
    }
  } catch {
    // malformed: answered below
  }
  throw new KnowledgeBaseError(KnowledgeBaseErrorCode.InvalidCursor, 'cursor is malformed');
}
