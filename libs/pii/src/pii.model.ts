import type { PiiType } from '@kb/contracts';

/**
 * Where a piece of personal data or a secret lies in a text: its type and its offsets (UTF-16
 * code units, `end` exclusive). Never its value: a finding can be logged, stored and counted.
 */
export interface PiiFinding {
  type: PiiType;
  start: number;
  end: number;
}

/** Finds one type of value in a text; every candidate it returns has passed its validator. */
export type Detector = (text: string) => PiiFinding[];

/** `[start, end)` of each match of a global regular expression whose value `accept` takes. */
export function matchesOf(
  text: string,
  pattern: RegExp,
  type: PiiType,
  accept: (match: RegExpExecArray) => boolean | { start: number; end: number } = () => true,
): PiiFinding[] {
  const findings: PiiFinding[] = [];
  for (const match of text.matchAll(pattern)) {
    const accepted = accept(match);
    if (accepted === false) continue;
    const span =
      accepted === true ? { start: match.index, end: match.index + match[0].length } : accepted;
    findings.push({ type, ...span });
  }
  return findings;
}
