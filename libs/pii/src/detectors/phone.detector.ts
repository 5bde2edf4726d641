import { findPhoneNumbersInText } from 'libphonenumber-js/max';

import type { Detector, PiiFinding } from '../pii.model';

// A bare run of digits is as often an order id or a timestamp as a phone number: it counts only
// after a word that announces one. Written with a `+`, separators or parentheses, it needs none,
// unless it is glued to a word (`INV-2024-000123`, `a/2024-000123`).
const BARE = /^\d+$/;
const GLUED_BEFORE = /[\w/.-]$/;
const GLUED_AFTER = /^-?\w/;
const ANNOUNCED = /\b(?:tel|phone|call|mobile|cell|fax|whatsapp|sms|text|ring|dial)\b\W{0,12}$/i;
/**
 * Where a phone number can be: seven or more digits with spaces, dots, dashes, slashes or
 * parentheses between, and a `+` or `(` before. The library scans only these stretches (and a
 * few characters around each), not the prose between them: its scan of a whole text cost more
 * than every other detector together.
 */
const STRETCH = /[+(]?\d(?:[\s().\-/]{0,3}\d){6,}\)?/g;
const MARGIN = 8;

/**
 * Phone numbers by libphonenumber's full metadata: a number in international form (`+44 …`) for
 * any country, a national one as a North American number. Only numbers valid for their country's
 * numbering plan are found, so dates, prices, versions and most order ids are not.
 */
export const detectPhones: Detector = (text) => {
  const findings: PiiFinding[] = [];
  for (const stretch of text.matchAll(STRETCH)) {
    const from = Math.max(0, stretch.index - MARGIN);
    const window = text.slice(from, stretch.index + stretch[0].length + MARGIN);
    for (const { startsAt, endsAt } of findPhoneNumbersInText(window, { defaultCountry: 'US' })) {
      const start = from + startsAt;
      const end = from + endsAt;
      if (findings.some((f) => f.start === start)) continue;
      if (
        !GLUED_BEFORE.test(text.slice(Math.max(0, start - 1), start)) &&
        !GLUED_AFTER.test(text.slice(end, end + 2)) &&
        (!BARE.test(text.slice(start, end)) ||
          ANNOUNCED.test(text.slice(Math.max(0, start - 40), start)))
      ) {
        findings.push({ type: 'phone', start, end });
      }
    }
  }
  return findings;
};
