import { findPhoneNumbersInText } from 'libphonenumber-js/max';

import type { Detector } from '../pii.model';

// A bare run of digits is as often an order id or a timestamp as a phone number: it counts only
// after a word that announces one. Written with a `+`, separators or parentheses, it needs none.
const BARE = /^\d+$/;
const ANNOUNCED = /\b(?:tel|phone|call|mobile|cell|fax|whatsapp|sms|text|ring|dial)\b\W{0,12}$/i;

/**
 * Phone numbers by libphonenumber's full metadata: a number in international form (`+44 …`) for
 * any country, a national one as a North American number. Only numbers valid for their country's
 * numbering plan are found, so dates, prices, versions and most order ids are not.
 */
export const detectPhones: Detector = (text) =>
  // A quick test first: the library's scan costs more than the detector's other passes together.
  /\d{3}/.test(text)
    ? findPhoneNumbersInText(text, { defaultCountry: 'US' })
        .filter(
          ({ startsAt, endsAt }) =>
            !BARE.test(text.slice(startsAt, endsAt)) ||
            ANNOUNCED.test(text.slice(Math.max(0, startsAt - 40), startsAt)),
        )
        .map(({ startsAt, endsAt }) => ({ type: 'phone' as const, start: startsAt, end: endsAt }))
    : [];
