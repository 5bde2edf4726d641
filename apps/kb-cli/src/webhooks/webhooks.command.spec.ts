import { InvalidArgumentError } from 'commander';

import type { Delivery } from './webhooks.client';
import { deliveryRows, parseEvents } from './webhooks.command';

describe('kb webhooks', () => {
  it('takes a comma list of known events and refuses others', () => {
    expect(parseEvents('document.indexed, source.synced')).toEqual([
      'document.indexed',
      'source.synced',
    ]);
    expect(() => parseEvents('document.indexed,document.created')).toThrow(InvalidArgumentError);
    expect(() => parseEvents(' , ')).toThrow(InvalidArgumentError);
  });

  it('shows one row per try, and a row for a delivery not tried yet', () => {
    const delivery = (id: string, attempts: Delivery['attempts']): Delivery => ({
      id,
      messageId: `msg_${id}`,
      eventType: 'document.indexed',
      status: attempts.at(-1)?.succeeded ? 'succeeded' : 'pending',
      attemptCount: attempts.length,
      nextAttemptAt: null,
      createdAt: '2026-11-24T00:00:00.000Z',
      updatedAt: '2026-11-24T00:00:00.000Z',
      attempts,
    });
    const at = '2026-11-24T00:00:01.000Z';
    const rows = deliveryRows([
      delivery('aaaaaaaa-1', [
        { attempt: 1, at, succeeded: false, statusCode: 500, error: 'HTTP 500', durationMs: 4 },
        { attempt: 2, at, succeeded: true, statusCode: 200, error: null, durationMs: 3 },
      ]),
      delivery('bbbbbbbb-2', []),
    ]);
    expect(rows.map((r) => [r.delivery, r.try, r.http, r.error])).toEqual([
      ['aaaaaaaa', 1, 500, 'HTTP 500'],
      ['aaaaaaaa', 2, 200, ''],
      ['bbbbbbbb', 0, '', ''],
    ]);
  });
});
