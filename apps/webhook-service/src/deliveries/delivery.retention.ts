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
import { CLOCK, type Clock } from '../platform/tokens';
import { DeliveriesRepository } from './deliveries.repository';

const pruned = meter().createCounter('kb_webhook_deliveries_pruned_total', {
  description: 'Finished deliveries deleted with their tries after the retention period',
});

/** Deletes per statement: short transactions that never hold many locks at once. */
const PRUNE_BATCH = 1_000;

/**
 * Keeps the delivery log to its retention period: every interval, finished deliveries older than
 * WEBHOOK_DELIVERY_RETENTION_DAYS are deleted in batches, oldest first. Replicas may run it at
 * the same time; a row deleted twice is simply gone.
 */
@Injectable()
export class DeliveryRetention implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryRetention.name);
  private readonly task: PeriodicTask;

  constructor(
    private readonly deliveries: DeliveriesRepository,
    @Inject(WEBHOOK_CONFIG)
    private readonly config: Pick<
      WebhookConfig,
      'WEBHOOK_DELIVERY_RETENTION_DAYS' | 'WEBHOOK_RETENTION_INTERVAL_MS'
    >,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.task = new PeriodicTask(
      'pruning deliveries',
      config.WEBHOOK_RETENTION_INTERVAL_MS,
      async () => {
        const count = await this.prune();
        if (count > 0) this.logger.log(`pruned ${count} finished deliveries`);
      },
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }

  /** Deletes every finished delivery past the retention period; returns how many. */
  async prune(): Promise<number> {
    const days = this.config.WEBHOOK_DELIVERY_RETENTION_DAYS;
    const before = new Date(this.clock().getTime() - days * 86_400_000);
    let total = 0;
    while (!this.task.stopping) {
      const count = await this.deliveries.pruneFinished(before, PRUNE_BATCH);
      total += count;
      pruned.add(count);
      if (count < PRUNE_BATCH) break;
    }
    return total;
  }
}
