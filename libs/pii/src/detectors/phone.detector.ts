import { findPhoneNumbersInText } from 'libphonenumber-js/max';

import type { Detector } from '../pii.model';

// A bare run of digits is as often an order id or a timestamp as a phone number: it counts only
// after a word that announces one. Written with a `+`, separators or parentheses, it needs none,
// unless it is glued to a word (`INV-2024-000123`, `a/2024-000123`).
const BARE = /^\d+$/;
const GLUED_BEFORE = /[\w/.-]$/;
const GLUED_AFTER = /^-?\w/;
const ANNOUNCED = /\b(?:tel|phone|call|mobile|cell|fax|whatsapp|sms|text|ring|dial)\b\W{0,12}$/i;

/**
 * Phone numbers by libphonenumber's full metadata: a number in international form (`+44 …`) for
 * any country, a national one as a North American number. Only numbers valid for their country's
 * numbering plan are found, so dates, prices, versions and most order ids are not.
 */
export const detectPhones: Detector = (text) =>
  // A quick test first (seven digits, single separators between): the library's scan costs more
  // than the detector's other passes together.
  /\d(?:\D?\d){6}/.test(text)
    ? findPhoneNumbersInText(text, { defaultCountry: 'US' })
        .filter(
          ({ startsAt, endsAt }) =>
            !GLUED_BEFORE.test(text.slice(Math.max(0, startsAt - 1), startsAt)) &&
            !GLUED_AFTER.test(text.slice(endsAt, endsAt + 2)) &&
            (!BARE.test(text.slice(startsAt, endsAt)) ||
              ANNOUNCED.test(text.slice(Math.max(0, startsAt - 40), startsAt))),
        )
        .map(({ startsAt, endsAt }) => ({ type: 'phone' as const, start: startsAt, end: endsAt }))
    : [];
