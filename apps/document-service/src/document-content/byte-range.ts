import type { ByteRange } from '@kb/storage';

/** What a `Range` header asks of a representation of `size` bytes. */
export type RangeRequest =
  { kind: 'whole' } | { kind: 'partial'; range: ByteRange } | { kind: 'unsatisfiable' };

const SINGLE = /^bytes=(\d*)-(\d*)$/;

/**
 * Reads a `Range` header (RFC 9110 §14) against a representation of `size` bytes. One range
 * `start-end`, `start-` or `-suffix` is served (206); a range starting past the end, or a zero
 * suffix, is unsatisfiable (416). Anything else — no header, another unit, a malformed or reversed
 * range, several ranges — is answered whole (200): the RFC lets a server ignore a Range header,
 * and a multipart/byteranges answer is more than any client of this API needs.
 */
export function rangeOf(header: string | undefined, size: number): RangeRequest {
  const match = header ? SINGLE.exec(header.trim()) : null;
  if (!match) return { kind: 'whole' };
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return { kind: 'whole' };
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', range: { start: Math.max(0, size - suffix), end: size - 1 } };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  return { kind: 'partial', range: { start, end } };
}

/**
 * Whether a conditional `If-Range` lets the range apply: only when it names the current entity
 * tag (dates are not validators here: the ETag is the content's SHA-256).
 */
export function ifRangeHolds(ifRange: string | undefined, etag: string): boolean {
  return ifRange === undefined || ifRange.trim() === etag;
}
