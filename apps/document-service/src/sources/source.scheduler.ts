import { QueueWorker } from '@kb/jobs';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { CLOCK, type Clock } from '../platform/tokens';
import type { SourceView } from './source.model';
import { nextRunOf } from './source-schedule';
import { SourceError } from './sources.errors';
import { type DueSource, SourcesRepository } from './sources.repository';
import { SourcesService } from './sources.service';

/** Scheduled syncs this replica starts at once. */
const CONCURRENCY = 4;
/** How long a claimed due source is this replica's to start: a sync starts in well under this. */
const LEASE_MS = 60_000;

/**
 * Starts the syncs sources' schedules ask for (docs/adr/0043). Due sources are a lease queue
 * (docs/adr/0049): every replica looks every SOURCE_SCHEDULE_TICK_MS (0: off) and claims due
 * sources with `FOR UPDATE SKIP LOCKED`, so one replica starts each due sync; once started, the
 * source moves to its next due time. A replica that dies in between leaves the source due again
 * when its lease ends. A due source still syncing (the one-running-sync lease) skips that time.
 */
@Injectable()
export class SourceScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(SourceScheduler.name);
  private readonly worker: QueueWorker<DueSource>;

  constructor(
    private readonly repository: SourcesRepository,
    @Inject(SourcesService) private readonly sources: Pick<SourcesService, 'syncOnSchedule'>,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(DOCUMENT_CONFIG)
    config: Pick<DocumentConfig, 'SOURCE_SCHEDULE_TICK_MS'>,
  ) {
    this.worker = new QueueWorker(
      { claim: (limit, leaseMs) => repository.claimDue(this.clock(), limit, leaseMs) },
      (due) => this.start(due),
      {
        name: 'source schedules',
        concurrency: CONCURRENCY,
        leaseMs: LEASE_MS,
        pollMs: config.SOURCE_SCHEDULE_TICK_MS,
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

  /** Starts every sync due now; answers how many due sources it took. */
  tick(): Promise<number> {
    return this.worker.drain();
  }

  /**
   * Starts a due source's sync, or skips this time when one still runs, then moves the source to
   * its next due time. A source that refuses to sync (its grant was withdrawn, it was deleted)
   * skips this time too; any other failure leaves it claimed, to be tried again when the lease
   * ends.
   */
  private async start(due: DueSource): Promise<void> {
    const { tenantId, source } = due;
    try {
      const sync = await this.sources.syncOnSchedule(tenantId, source);
      this.logger.log(
        sync
          ? `source ${source.id}: scheduled sync ${sync.id} started`
          : `source ${source.id}: still syncing, this scheduled time is skipped`,
      );
    } catch (error) {
      if (!(error instanceof SourceError)) throw error;
      this.logger.warn(`source ${source.id}: scheduled sync not started: ${error.message}`);
    }
    await this.repository.scheduleNext(due, this.nextOf(source, this.clock()));
  }

  /** The next due time; a schedule that no longer parses stops (null) rather than loop. */
  private nextOf(source: SourceView, now: Date): Date | null {
    try {
      return nextRunOf(source.schedule!, source.timezone, now);
    } catch (error) {
      this.logger.warn(`source ${source.id}: schedule dropped: ${String(error)}`);
      return null;
    }
  }
}
