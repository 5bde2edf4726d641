export { detectPii, summarize } from './detect';
export type { PiiFinding } from './pii.model';
export { PLACEHOLDERS, redact, type Redaction } from './redact';
