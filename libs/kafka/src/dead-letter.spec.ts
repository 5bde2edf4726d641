import { type TopicEnvelope, Topics } from '@kb/contracts';

import { INTERNAL_FAILURE_DETAIL, markFailedOnDeadLetter } from './dead-letter';
import type { DeadLetter } from './event-consumer';
import type { EventProducer, OutgoingEvent } from './event-producer';

/** Records what would be published. */
function recorder() {
  const published: Array<OutgoingEvent<typeof Topics.documentStatus>> = [];
  const producer = {
    publish: async (event: OutgoingEvent<typeof Topics.documentStatus>) =>
      void published.push(event),
  } as Pick<EventProducer, 'publish'> as EventProducer;
  return { producer, published };
}

const envelope = {
  tenantId: 't1',
  payload: { documentId: '0b0f6f4e-3a57-4bb8-9d43-7e7f2c8a5a11', version: 2 },
} as unknown as TopicEnvelope<typeof Topics.documentParsed>;

const letter = (overrides: Partial<DeadLetter>): DeadLetter => ({
  topic: Topics.documentParsed,
  key: null,
  reason: 'retries_exhausted',
  error: 'connect ECONNREFUSED 10.0.3.7:9000',
  permanent: false,
  envelope,
  ...overrides,
});

describe('markFailedOnDeadLetter', () => {
  it('fails the document with the reason and message a PermanentError wrote for the user', async () => {
    const { producer, published } = recorder();
    await markFailedOnDeadLetter(
      producer,
      'embedding_error',
    )(letter({ reason: 'no_text', error: 'the PDF has no text layer', permanent: true }));
    expect(published).toEqual([
      expect.objectContaining({
        topic: Topics.documentStatus,
        payload: expect.objectContaining({
          status: 'failed',
          reason: 'no_text',
          detail: 'the PDF has no text layer',
        }),
      }),
    ]);
  });

  it('keeps any other error’s text (hosts, SQL, S3) away from the user', async () => {
    const { producer, published } = recorder();
    await markFailedOnDeadLetter(producer, 'embedding_error')(letter({}));
    expect(published[0]!.payload).toMatchObject({
      reason: 'embedding_error',
      detail: INTERNAL_FAILURE_DETAIL,
    });
    expect(JSON.stringify(published)).not.toContain('ECONNREFUSED');
  });
});
