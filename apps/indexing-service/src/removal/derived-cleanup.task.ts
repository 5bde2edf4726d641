import { QueueWorker } from '@kb/jobs';
import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

import { DocumentRemovalService, type QueuedDerived } from './document-removal.service';

/** Documents whose derived objects are listed and deleted at once. */
const CONCURRENCY = 16;
/** How long a claimed document is this replica's: many prefix listings and deletes. */
const LEASE_MS = 5 * 60_000;
/** How often the queue is looked at when it was found empty. */
const POLL_MS = 1000;

/**
 * Removes the parsed chunks and embeddings in S3 of documents removed in bulk (docs/adr/0024),
 * off the Kafka partitions: a batch of 1,000 would otherwise hold its partition for the seconds
 * 1,000 prefix listings take. The queue is a lease queue drained by a `QueueWorker`
 * (docs/adr/0049): replicas share it, and a document whose replica died is taken again.
 */
@Injectable()
export class DerivedCleanupTask implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DerivedCleanupTask.name);
  private readonly worker: QueueWorker<QueuedDerived>;

  constructor(removal: DocumentRemovalService) {
    this.worker = new QueueWorker(
      removal.derivedQueue,
      async (job) => void (await removal.removeQueuedDerived(job)),
      {
        name: 'derived cleanup',
        concurrency: CONCURRENCY,
        leaseMs: LEASE_MS,
        pollMs: POLL_MS,
        onPass: (taken) =>
          this.logger.log(`removed the derived objects of ${taken} documents removed in bulk`),
      },
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.worker.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.worker.stop();
  }

  /** Takes queued documents until none is left; returns how many. */
  drain(): Promise<number> {
    return this.worker.drain();
  }
}
