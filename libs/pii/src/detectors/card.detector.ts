import isCreditCard from 'validator/lib/isCreditCard';

import { type Detector, matchesOf } from '../pii.model';

// 13 to 19 digits, alone or in groups split by one space or dash; then validator's isCreditCard:
// a known issuer's prefix and length, and the Luhn checksum. Digits glued to letters, dots or
// other digits (order ids, decimals) are not candidates.
const CANDIDATE = /(?<![\w.,-])\d(?:[ -]?\d){12,18}(?![\w]|[.,-]\d)/g;

export const detectCards: Detector = (text) =>
  matchesOf(text, CANDIDATE, 'card', ([value]) => {
    const separators = new Set(value.match(/[ -]/g) ?? []);
    return separators.size <= 1 && isCreditCard(value.replace(/[ -]/g, ''));
  });
