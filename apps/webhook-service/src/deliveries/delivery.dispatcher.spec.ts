import type { WebhookConfig } from '../config/webhook.config';
import type { ClaimedDelivery, DeliveriesRepository } from './deliveries.repository';
import { DeliveryDispatcher } from './delivery.dispatcher';
import type { ReceiverSender, SendResult } from './receiver.sender';

const config = {
  WEBHOOK_MAX_ATTEMPTS: 3,
  WEBHOOK_RETRY_BASE_MS: 1_000,
  WEBHOOK_RETRY_MAX_MS: 60_000,
  WEBHOOK_DISABLE_AFTER_FAILURES: 20,
  WEBHOOK_DISABLE_AFTER_MS: 0,
  WEBHOOK_TIMEOUT_MS: 10_000,
  WEBHOOK_DISPATCH_INTERVAL_MS: 60_000,
  WEBHOOK_DISPATCH_CONCURRENCY: 2,
  WEBHOOK_TENANT_CONCURRENCY: 2,
} as WebhookConfig;

const delivery = (id: string, url: string): ClaimedDelivery => ({
  id,
  tenantId: 't',
  webhookId: `w-${id}`,
  messageId: `msg_${id}`,
  eventType: 'document.indexed',
  body: '{}',
  attemptCount: 0,
  url,
  secrets: [`whsec_${Buffer.alloc(32, 1).toString('base64')}`],
});

/** The dispatcher's pool over a queue in memory: what the claim is asked for, what is sent. */
function harness(queue: ClaimedDelivery[]) {
  const claims: Array<{ limit: number; perTenant: number | undefined }> = [];
  const sent: string[] = [];
  let releaseSlow = (): void => undefined;
  const slow = new Promise<void>((resolve) => (releaseSlow = resolve));
  const deliveries = {
    claimDue: jest.fn(async (_now: Date, limit: number, _lease: number, perTenant?: number) => {
      claims.push({ limit, perTenant });
      return queue.splice(0, limit);
    }),
    recordAttempt: jest.fn(async () => ({ status: 'succeeded' as const, disabledNow: false })),
  };
  const sender: ReceiverSender = {
    post: async (url): Promise<SendResult> => {
      if (url.endsWith('/slow')) await slow;
      sent.push(url);
      return { statusCode: 200, error: null };
    },
  };
  const dispatcher = new DeliveryDispatcher(
    deliveries as unknown as DeliveriesRepository,
    sender,
    config,
    () => new Date(),
  );
  return { dispatcher, claims, sent, releaseSlow, deliveries };
}

describe('DeliveryDispatcher pool (review N7)', () => {
  it('refills a slot as soon as its try ends: a slow receiver holds one slot, not a batch', async () => {
    const queue = [
      delivery('slow', 'http://r/slow'),
      ...[1, 2, 3, 4].map((n) => delivery(`f${n}`, `http://r/fast-${n}`)),
    ];
    const { dispatcher, claims, sent, releaseSlow } = harness(queue);
    const run = dispatcher.dispatchDue();
    // Every fast delivery goes out while the slow one is still in flight (a batch of two would
    // have waited for it).
    for (let i = 0; i < 50 && sent.length < 4; i++) await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([
      'http://r/fast-1',
      'http://r/fast-2',
      'http://r/fast-3',
      'http://r/fast-4',
    ]);
    // Each claim asks for the free slots only, with the tenant's share.
    expect(claims[0]).toEqual({ limit: 2, perTenant: 2 });
    expect(claims.slice(1).every((c) => c.limit === 1 && c.perTenant === 2)).toBe(true);
    releaseSlow();
    await expect(run).resolves.toBe(5);
    expect(sent).toHaveLength(5);
  });

  it('sends nothing and logs no try for a delivery whose secret does not open', async () => {
    const unreadable = { ...delivery('x', 'http://r/x'), secrets: [], secretError: 'no key' };
    const { dispatcher, sent, deliveries } = harness([unreadable]);
    await expect(dispatcher.dispatchDue()).resolves.toBe(1);
    expect(sent).toEqual([]);
    expect(deliveries.recordAttempt).not.toHaveBeenCalled();
  });
});
