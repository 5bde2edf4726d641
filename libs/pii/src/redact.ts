import type { PiiSummary, PiiType } from '@kb/contracts';

import { detectPii, summarize } from './detect';
import type { PiiFinding } from './pii.model';

/** What replaces each finding in redacted text. */
export const PLACEHOLDERS: Record<PiiType, string> = {
  email: '[EMAIL]',
  phone: '[PHONE]',
  card: '[CARD]',
  iban: '[IBAN]',
  ssn: '[SSN]',
  ip: '[IP]',
  secret: '[SECRET]',
};

export interface Redaction {
  /** The text with every finding replaced by its placeholder. */
  text: string;
  /** The findings, with offsets in the original text. */
  findings: PiiFinding[];
  summary: PiiSummary;
  /**
   * Where an offset of the original text lands in the redacted one: moved by what the
   * replacements before it added or removed; an offset inside a finding lands at its
   * placeholder's start (its end, for an exclusive end offset: `{ end: true }`).
   */
  toRedacted(offset: number, options?: { end?: boolean }): number;
}

/** `text` with each piece of personal data or secret replaced by a placeholder such as `[EMAIL]`. */
export function redact(text: string): Redaction {
  const findings = detectPii(text);
  const parts: string[] = [];
  // For each finding: its original span and its placeholder's span in the redacted text.
  const moves: Array<{ start: number; end: number; to: number; toEnd: number }> = [];
  let from = 0;
  let length = 0;
  for (const finding of findings) {
    const placeholder = PLACEHOLDERS[finding.type];
    parts.push(text.slice(from, finding.start), placeholder);
    const to = length + finding.start - from;
    moves.push({ start: finding.start, end: finding.end, to, toEnd: to + placeholder.length });
    length = to + placeholder.length;
    from = finding.end;
  }
  parts.push(text.slice(from));
  return {
    text: parts.join(''),
    findings,
    summary: summarize(findings),
    toRedacted(offset, options) {
      // The last move starting at or before the offset (binary search: pages are many).
      let low = 0;
      let high = moves.length - 1;
      let last = -1;
      while (low <= high) {
        const mid = (low + high) >> 1;
        if (moves[mid]!.start <= offset) {
          last = mid;
          low = mid + 1;
        } else high = mid - 1;
      }
      if (last < 0) return offset;
      const move = moves[last]!;
      if (offset >= move.end) return move.toEnd + offset - move.end;
      return options?.end && offset > move.start ? move.toEnd : move.to;
    },
  };
}
