import { type Detector, matchesOf } from '../pii.model';

// A US social security number written `AAA-GG-SSSS` (or with spaces), or as nine digits right
// after "SSN" or "social security". Issued numbers never have area 000, 666 or 900-999, group 00
// or serial 0000; two widely published examples were never valid either. Glued to more
// (`456-78-9012-A`), it is some other id.
const DASHED = /(?<![\w.-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\w]|[.-]\w)/g;
const LABELLED =
  /(?<=\b(?:SSN|social security(?: number)?|SS#)\s*(?:no\.?|number|#)?\s*:?\s*)(\d{3})(\d{2})(\d{4})\b/gi;
const NEVER_ISSUED = new Set(['078051120', '219099999']);

const isIssuable = (area: string, group: string, serial: string): boolean =>
  area !== '000' &&
  area !== '666' &&
  area[0] !== '9' &&
  group !== '00' &&
  serial !== '0000' &&
  !NEVER_ISSUED.has(area + group + serial);

export const detectSsns: Detector = (text) => [
  ...matchesOf(text, DASHED, 'ssn', (m) => isIssuable(m[1]!, m[3]!, m[4]!)),
  ...matchesOf(text, LABELLED, 'ssn', (m) => isIssuable(m[1]!, m[2]!, m[3]!)),
];
