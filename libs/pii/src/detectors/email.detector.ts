import isEmail from 'validator/lib/isEmail';

import { type Detector, matchesOf } from '../pii.model';

// Candidates by a loose shape, then validator's isEmail. A last label that is an image or code
// file's extension is a file name, not an address (`icon@2x.png`, `logo@3x.webp`).
const CANDIDATE =
  /(?<![\w.%+-])[A-Za-z0-9][\w.%+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b/g;
const FILE_EXTENSIONS = new Set(['png', 'jpg', 'jpeg', 'gif', 'svg', 'webp', 'js', 'ts', 'css']);

export const detectEmails: Detector = (text) =>
  matchesOf(text, CANDIDATE, 'email', ([value]) => {
    const tld = value.slice(value.lastIndexOf('.') + 1).toLowerCase();
    return !FILE_EXTENSIONS.has(tld) && isEmail(value);
  });
