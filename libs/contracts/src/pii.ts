import { z } from 'zod';

// What a knowledge base does about personal data and secrets in its documents (docs/adr/0051),
// set at creation or by an update and carried to the parser on each `uploaded` event.

/**
 * `off`: nothing is looked for. `detect`: findings are counted on the document and in metrics.
 * `redact`: each finding is replaced by a placeholder (`[EMAIL]`) before chunking and embedding.
 * `block`: a document with any finding fails with reason `pii_blocked`.
 */
export const PII_MODES = ['off', 'detect', 'redact', 'block'] as const;
export const piiModeSchema = z.enum(PII_MODES);
export type PiiMode = z.infer<typeof piiModeSchema>;

/** What the detector finds; a finding carries its type and offsets, never the value. */
export const PII_TYPES = ['email', 'phone', 'card', 'iban', 'ssn', 'ip', 'secret'] as const;
export const piiTypeSchema = z.enum(PII_TYPES);
export type PiiType = z.infer<typeof piiTypeSchema>;

/** Findings of one document version, counted by type (types without a finding are left out). */
export const piiSummarySchema = z.partialRecord(piiTypeSchema, z.number().int().min(1));
export type PiiSummary = Partial<Record<PiiType, number>>;

const STRICTNESS: Record<PiiMode, number> = { off: 0, detect: 1, redact: 2, block: 3 };

/**
 * The setting that applies to a document in several knowledge bases: the strictest of theirs
 * (block, then redact, then detect), since its text is extracted, chunked and stored once.
 */
export const strictestPiiMode = (modes: Iterable<PiiMode | undefined>): PiiMode => {
  let strictest: PiiMode = 'off';
  for (const mode of modes) {
    if (mode && STRICTNESS[mode] > STRICTNESS[strictest]) strictest = mode;
  }
  return strictest;
};
