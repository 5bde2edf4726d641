import { FAILURE_REASONS, type FailureReason, Topics } from '@kb/contracts';

import type { DeadLetter } from './event-consumer';
import type { EventProducer } from './event-producer';

/** What a user reads when processing failed for a reason that is not the document's own. */
export const INTERNAL_FAILURE_DETAIL =
  'processing failed after several attempts; the operators have the error (dead-letter topic and logs)';

/**
 * After a dead-letter, marks the document `failed` with a machine-readable reason, so nothing is
 * dropped silently: a PermanentError's reason when it is a known one, else `fallback`. The detail
 * is the PermanentError's message (written for the user); any other error's text stays with the
 * operators, since it may name internal hosts, SQL or S3 keys.
 */
export function markFailedOnDeadLetter(
  producer: EventProducer,
  fallback: FailureReason,
): (letter: DeadLetter) => Promise<void> {
  return async (letter) => {
    const payload = letter.envelope?.payload as
      { documentId?: unknown; version?: unknown } | undefined;
    if (
      !letter.envelope ||
      typeof payload?.documentId !== 'string' ||
      typeof payload.version !== 'number'
    ) {
      return; // Malformed message: it is in the dead-letter topic, and there is no document to mark.
    }
    const reason = (FAILURE_REASONS as readonly string[]).includes(letter.reason)
      ? (letter.reason as FailureReason)
      : fallback;
    await producer.publish({
      topic: Topics.documentStatus,
      tenantId: letter.envelope.tenantId,
      key: payload.documentId,
      payload: {
        documentId: payload.documentId,
        version: payload.version,
        status: 'failed',
        reason,
        detail: letter.permanent ? letter.error.slice(0, 500) : INTERNAL_FAILURE_DETAIL,
      },
    });
  };
}
