import { FAILURE_REASONS, type FailureReason, Topics } from '@kb/contracts';

import type { DeadLetter } from './event-consumer';
import type { EventProducer } from './event-producer';

/**
 * After a dead-letter, marks the document `failed` with a machine-readable reason, so nothing is
 * dropped silently: a PermanentError's reason when it is a known one, else `fallback`.
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
        detail: letter.error.slice(0, 500),
      },
    });
  };
}
