import { type Detector, matchesOf } from '../pii.model';

// Credentials by the shapes their issuers give them, and PEM private-key blocks (public keys and
// certificates are not secrets). A generic `sk-` key ends in a random part of 20+ characters
// mixing letters and digits, which hyphenated words (`sk-learn-compatible-2024`) do not.
const SHAPES: RegExp[] = [
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, // AWS access key id
  /\bgh[pousr]_[A-Za-z0-9]{36,255}\b/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g, // GitHub fine-grained tokens
  /\bxox[abposr]-[A-Za-z0-9-]{10,250}/g, // Slack tokens
  /\bAIza[0-9A-Za-z_-]{35}\b/g, // Google API key
  /\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,247}\b/g, // Stripe secret and restricted keys
  /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----/g,
];
const GENERIC = /(?<![\w-])sk-(?:[A-Za-z0-9_]+-)*[A-Za-z0-9_]{20,}(?![\w-])/g;

const endsRandom = (value: string): boolean => {
  const last = value.slice(value.lastIndexOf('-') + 1);
  return last.length >= 20 && /[A-Za-z]/.test(last) && /\d/.test(last);
};

export const detectSecrets: Detector = (text) => [
  ...SHAPES.flatMap((shape) => matchesOf(text, shape, 'secret')),
  ...matchesOf(text, GENERIC, 'secret', ([value]) => endsRandom(value)),
];
