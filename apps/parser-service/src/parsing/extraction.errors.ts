import type { FailureReason } from '@kb/contracts';

/** The reasons a document's own content fails extraction (a subset of the document failure reasons). */
export type ExtractionFailure = Extract<
  FailureReason,
  | 'unsupported_type'
  | 'type_mismatch'
  | 'encrypted'
  | 'no_text'
  | 'parse_error'
  | 'too_large'
  | 'timeout'
>;

/**
 * A document that cannot be extracted, whatever the number of tries. Extraction code throws this
 * and imports nothing of Kafka, so a worker thread starts without loading the Kafka client; the
 * callers turn it into a PermanentError (dead-lettered at once, document failed with `reason`).
 */
export class ExtractionError extends Error {
  constructor(
    readonly reason: ExtractionFailure,
    message: string,
  ) {
    super(message);
    this.name = 'ExtractionError';
  }
}
