import type { PiiSummary, PiiType } from '@kb/contracts';

import { detectCards } from './detectors/card.detector';
import { detectEmails } from './detectors/email.detector';
import { detectIbans } from './detectors/iban.detector';
import { detectIps } from './detectors/ip.detector';
import { detectPhones } from './detectors/phone.detector';
import { detectSecrets } from './detectors/secret.detector';
import { detectSsns } from './detectors/ssn.detector';
import type { Detector, PiiFinding } from './pii.model';

/**
 * Which finding stays when two overlap: the more specific shape first. A secret can hold an
 * address or digits; an IBAN or a card number can look like a phone number; an SSN too.
 */
const PRECEDENCE: Record<PiiType, number> = {
  secret: 0,
  email: 1,
  iban: 2,
  card: 3,
  ssn: 4,
  ip: 5,
  phone: 6,
};

const DETECTORS: Detector[] = [
  detectSecrets,
  detectEmails,
  detectIbans,
  detectCards,
  detectSsns,
  detectIps,
  detectPhones,
];

const wins = (a: PiiFinding, b: PiiFinding): boolean =>
  PRECEDENCE[a.type] !== PRECEDENCE[b.type]
    ? PRECEDENCE[a.type] < PRECEDENCE[b.type]
    : a.end - a.start > b.end - b.start;

/**
 * Every piece of personal data and every secret in `text`, in order and never overlapping: of two
 * findings that overlap, the more specific type (then the longer) stays.
 */
export function detectPii(text: string): PiiFinding[] {
  const candidates = DETECTORS.flatMap((detect) => detect(text)).sort(
    (a, b) => a.start - b.start || b.end - a.end,
  );
  const kept: PiiFinding[] = [];
  for (const candidate of candidates) {
    // Drop every kept finding the candidate overlaps and beats; keep it only if it beat them all.
    let beatsAll = true;
    while (kept.length > 0 && kept.at(-1)!.end > candidate.start) {
      if (!wins(candidate, kept.at(-1)!)) {
        beatsAll = false;
        break;
      }
      kept.pop();
    }
    if (beatsAll) kept.push(candidate);
  }
  return kept;
}

/** Findings counted by type: what a document records and what metrics count. */
export function summarize(findings: PiiFinding[]): PiiSummary {
  const summary: PiiSummary = {};
  for (const { type } of findings) summary[type] = (summary[type] ?? 0) + 1;
  return summary;
}
