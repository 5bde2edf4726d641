import isIBAN from 'validator/lib/isIBAN';

import { type Detector, matchesOf } from '../pii.model';

// A country code, two check digits, then letters and digits, printed as one word or in groups of
// four. The candidate may run on into the next word, so the longest prefix that passes
// validator's isIBAN (the country's format, then mod-97) is the finding; it must end a word.
const CANDIDATE = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){10,32}/g;
const MIN_LENGTH = 15;

export const detectIbans: Detector = (text) =>
  matchesOf(text, CANDIDATE, 'iban', (match) => {
    for (let end = match.index + match[0].length; end > match.index; end--) {
      const iban = text.slice(match.index, end).replace(/ /g, '');
      if (iban.length < MIN_LENGTH) break;
      if (/[A-Za-z0-9]/.test(text[end] ?? '') || text[end - 1] === ' ') continue;
      if (isIBAN(iban)) return { start: match.index, end };
    }
    return false;
  });
