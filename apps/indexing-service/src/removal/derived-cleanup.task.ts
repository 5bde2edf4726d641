import { PeriodicTask } from '@kb/timing';
import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

import { DERIVED_CLAIM, DocumentRemovalService } from './document-removal.service';

/** How often the queue is looked at when it was found empty. */
const INTERVAL_MS = 1000;

/**
 * Removes the parsed chunks and embeddings in S3 of documents removed in bulk (docs/adr/0024),
 * off the Kafka partitions: a batch of 1,000 would otherwise hold its partition for the seconds
 * 1,000 prefix listings take. Each pass drains the queue (`DERIVED_CLAIM` documents at a time)
 * until it is empty. Replicas share the queue through leases.
 */
@Injectable()
export class DerivedCleanupTask implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DerivedCleanupTask.name);
  private readonly task: PeriodicTask;
  private stopping = false;

  constructor(private readonly removal: DocumentRemovalService) {
    this.task = new PeriodicTask('derived cleanup', INTERVAL_MS, () => this.drain(), this.logger);
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.task.stop();
  }

  /** Takes queued documents until a pass finds fewer than a full claim; returns how many. */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const taken = await this.removal.removeQueuedDerived();
      total += taken;
      if (taken < DERIVED_CLAIM || this.stopping) return total;
    }
  }
}
