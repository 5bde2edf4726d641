import { randomUUID } from 'node:crypto';

import { decodeCursor, encodeCursor } from './document.cursor';
import type { DocumentView } from './document.model';
import { DocumentErrorCode } from './documents.errors';

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('document cursors', () => {
  it('decode to the last document of the page they were made from', () => {
    const id = randomUUID();
    const createdAt = '2026-11-23T18:00:00.000Z';
    expect(decodeCursor(encodeCursor({ id, createdAt } as DocumentView))).toEqual({
      id,
      createdAt,
    });
  });

  it.each([
    ['not base64 JSON', '%%%'],
    ['JSON without the fields', encode({ a: 1 })],
    ['a createdAt that is no timestamp', encode({ createdAt: 'yesterday', id: randomUUID() })],
    ['an id that is no UUID', encode({ createdAt: '2026-11-23T18:00:00Z', id: "1' or '1'='1" })],
  ])('refuse %s as invalid_cursor (400), before any SQL', (_what, cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(
      expect.objectContaining({ code: DocumentErrorCode.InvalidCursor, kind: 'invalid_argument' }),
    );
  });
});
