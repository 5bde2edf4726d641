import { meter } from '@kb/observability';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

import { WEBHOOK_CONFIG, type WebhookConfig } from '../config/webhook.config';
import { IntervalTask } from '../platform/interval-task';
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
 * so a receiver that is down never holds a partition. Each tick claims the due deliveries (a
 * lease: replicas share the work, a crash only delays), signs and POSTs each, and logs the try;
 * a failed try is due again after an exponential wait, until the tries are used up.
 */
@Injectable()
export class DeliveryDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryDispatcher.name);
  private readonly task: IntervalTask;
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
    this.task = new IntervalTask(
      'dispatch',
      config.WEBHOOK_DISPATCH_INTERVAL_MS,
      () => this.dispatchDue(),
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  /** Stops claiming and waits for the tries in flight to be logged. */
  beforeApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }

  /** Claims and sends due deliveries until none is left (or shutdown); returns how many. */
  async dispatchDue(): Promise<number> {
    let sent = 0;
    const limit = this.config.WEBHOOK_DISPATCH_CONCURRENCY;
    // Long enough for every try of a batch to time out and be logged.
    const leaseMs = this.config.WEBHOOK_TIMEOUT_MS * 2 + 5_000;
    while (!this.task.stopping) {
      const batch = await this.deliveries.claimDue(this.clock(), limit, leaseMs);
      await Promise.all(
        batch.map((delivery) =>
          // Its lease runs out and it is tried again; the rest of the batch goes on.
          this.deliver(delivery).catch((error: unknown) =>
            this.logger.error(`delivery ${delivery.id} could not be recorded: ${String(error)}`),
          ),
        ),
      );
      sent += batch.length;
      if (batch.length < limit) break;
    }
    return sent;
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
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
