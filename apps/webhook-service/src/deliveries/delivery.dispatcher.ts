import { meter } from '@kb/observability';
import { PeriodicTask } from '@kb/timing';
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
 * so a receiver that is down never holds a partition. It claims due deliveries (a lease: replicas
 * share the work, a crash only delays) into a pool of independent tries, fairly across tenants,
 * signs and POSTs each, and logs the try; a failed try is due again after an exponential wait,
 * until the tries are used up.
 */
@Injectable()
export class DeliveryDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryDispatcher.name);
  private readonly task: PeriodicTask;
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
    this.task = new PeriodicTask(
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

  /**
   * Sends due deliveries through a pool of WEBHOOK_DISPATCH_CONCURRENCY slots until none is due
   * and none is in flight (or shutdown); returns how many were claimed. Each try runs on its own:
   * when one ends its slot is refilled at once, so a slow receiver holds one slot, not a batch.
   * The claim gives a tenant at most WEBHOOK_TENANT_CONCURRENCY of them at once, oldest due first
   * tenant by tenant (`claimDue`), so one tenant's slow or failing receivers cannot occupy the
   * pool (review N7). While tries are in flight, new due deliveries are looked for every
   * WEBHOOK_DISPATCH_INTERVAL_MS and whenever a try ends.
   */
  async dispatchDue(): Promise<number> {
    let sent = 0;
    const slots = this.config.WEBHOOK_DISPATCH_CONCURRENCY;
    const perTenant = this.config.WEBHOOK_TENANT_CONCURRENCY;
    // Long enough for a try to time out and be logged.
    const leaseMs = this.config.WEBHOOK_TIMEOUT_MS * 2 + 5_000;
    const inFlight = new Set<Promise<void>>();
    let ended = signal();
    try {
      while (!this.task.stopping) {
        const free = slots - inFlight.size;
        const claimed =
          free > 0 ? await this.deliveries.claimDue(this.clock(), free, leaseMs, perTenant) : [];
        for (const delivery of claimed) {
          const run: Promise<void> = this.deliver(delivery)
            // Its lease runs out and it is tried again; the other tries go on.
            .catch((error: unknown) =>
              this.logger.error(`delivery ${delivery.id} could not be recorded: ${String(error)}`),
            )
            .finally(() => {
              inFlight.delete(run);
              ended.fire();
            });
          inFlight.add(run);
        }
        sent += claimed.length;
        if (inFlight.size === 0 && claimed.length === 0) break;
        // The pool is full, or nothing more is due (or every tenant with due deliveries is at its
        // share): wait for a try to end, or for the next look.
        await ended.within(this.config.WEBHOOK_DISPATCH_INTERVAL_MS);
        ended = signal();
      }
    } finally {
      // Also when a claim failed: the tries already started are logged before the next run.
      await Promise.all(inFlight);
    }
    return sent;
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

/** A one-shot wake-up: `fire` ends `within`'s wait early, even when it fired before the wait. */
function signal(): { fire(): void; within(ms: number): Promise<void> } {
  let fired = false;
  let wake = (): void => undefined;
  return {
    fire() {
      fired = true;
      wake();
    },
    within(ms) {
      if (fired) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
  };
}
