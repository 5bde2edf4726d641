import { type LeaseQueue, QueueWorker } from '@kb/jobs';
import { meter } from '@kb/observability';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

import { WEBHOOK_CONFIG, type WebhookConfig } from '../config/webhook.config';
import { CLOCK, type Clock, RECEIVER_SENDER } from '../platform/tokens';
import { retryDelayMs, type RetryPolicy } from './backoff';
import { type ClaimedDelivery, DeliveriesRepository } from './deliveries.repository';
import type { ReceiverSender } from './receiver.sender';
import { signedHeaders } from './signing';

const attempts = meter().createCounter('kb_webhook_attempts_total', {
  description: 'Webhook delivery tries, by event type and outcome (succeeded, retrying, failed)',
});
const attemptDuration = meter().createHistogram('kb_webhook_attempt_duration_ms', {
  description: 'Time a receiver took to answer one try',
  unit: 'ms',
});
const disabled = meter().createCounter('kb_webhooks_disabled_total', {
  description: 'Subscriptions disabled after repeated failure',
});

/**
 * Sends what the deliveries table owes, apart from Kafka: the consumer only records deliveries,
 * so a receiver that is down never holds a partition. The deliveries table is a lease queue
 * (docs/adr/0049) drained by a `QueueWorker`: replicas share the work, a crash only delays. Each
 * try is signed, POSTed and logged; a failed try is due again after an exponential wait, until
 * the tries are used up.
 */
@Injectable()
export class DeliveryDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryDispatcher.name);
  private readonly worker: QueueWorker<ClaimedDelivery>;
  private readonly policy: RetryPolicy;

  constructor(
    private readonly deliveries: DeliveriesRepository,
    @Inject(RECEIVER_SENDER) private readonly sender: ReceiverSender,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.policy = {
      maxAttempts: config.WEBHOOK_MAX_ATTEMPTS,
      baseMs: config.WEBHOOK_RETRY_BASE_MS,
      maxMs: config.WEBHOOK_RETRY_MAX_MS,
    };
    // The claim gives a tenant at most WEBHOOK_TENANT_CONCURRENCY deliveries in flight, oldest
    // due first tenant by tenant (`claimDue`), so one tenant's slow or failing receivers cannot
    // occupy the pool (review N7).
    const queue: LeaseQueue<ClaimedDelivery> = {
      claim: (limit, leaseMs) =>
        deliveries.claimDue(this.clock(), limit, leaseMs, config.WEBHOOK_TENANT_CONCURRENCY),
    };
    this.worker = new QueueWorker(
      queue,
      (delivery) => this.deliver(delivery),
      {
        name: 'dispatch',
        concurrency: config.WEBHOOK_DISPATCH_CONCURRENCY,
        // Long enough for a try to time out and be logged.
        leaseMs: config.WEBHOOK_TIMEOUT_MS * 2 + 5_000,
        pollMs: config.WEBHOOK_DISPATCH_INTERVAL_MS,
      },
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.worker.start();
  }

  /** Stops claiming and waits for the tries in flight to be logged. */
  beforeApplicationShutdown(): Promise<void> {
    return this.worker.stop();
  }

  /**
   * Sends due deliveries through WEBHOOK_DISPATCH_CONCURRENCY slots until none is due and none is
   * in flight (or shutdown); returns how many were claimed.
   */
  dispatchDue(): Promise<number> {
    return this.worker.drain();
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    if (delivery.secretError !== undefined) {
      // An operator's mistake (a key dropped too early), not the receiver's: no try is logged and
      // none is used up; the delivery is due again when its lease ends.
      this.logger.error(`delivery ${delivery.id} not sent: ${delivery.secretError}`);
      return;
    }
    const started = this.clock();
    const began = performance.now();
    const result = await this.sender.post(
      delivery.url,
      { ...signedHeaders(delivery.secrets, delivery.messageId, started, delivery.body) },
      delivery.body,
    );
    const durationMs = Math.round(performance.now() - began);
    const succeeded = result.error === null;
    const failedSoFar = delivery.attemptCount + 1;
    const delay = succeeded ? undefined : retryDelayMs(failedSoFar, this.policy);
    const recorded = await this.deliveries.recordAttempt(
      delivery,
      { succeeded, statusCode: result.statusCode, error: result.error, durationMs, at: started },
      delay === undefined ? undefined : new Date(this.clock().getTime() + delay),
      {
        failures: this.config.WEBHOOK_DISABLE_AFTER_FAILURES,
        afterMs: this.config.WEBHOOK_DISABLE_AFTER_MS,
      },
    );
    const outcome = recorded.status === 'pending' ? 'retrying' : recorded.status;
    attempts.add(1, { event: delivery.eventType, outcome });
    attemptDuration.record(durationMs, { outcome });
    if (!succeeded) {
      this.logger.warn(
        `delivery ${delivery.id} (${delivery.eventType}) to webhook ${delivery.webhookId} try ${failedSoFar} failed: ${result.error}; ${
          delay === undefined ? 'given up' : `next try in ${delay} ms`
        }`,
      );
    }
    if (recorded.disabledNow) {
      disabled.add(1);
      this.logger.warn(`webhook ${delivery.webhookId} disabled after repeated failure`);
    }
  }
}
