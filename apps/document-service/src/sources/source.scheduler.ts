import { PeriodicTask } from '@kb/timing';
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
import { SourcesRepository } from './sources.repository';
import { SourcesService } from './sources.service';

/** Due sources claimed per tick; the rest wait for the next one. */
const CLAIM_PER_TICK = 16;

/**
 * Starts the syncs sources' schedules ask for (docs/adr/0043). Every replica ticks every
 * SOURCE_SCHEDULE_TICK_MS (0: off); a tick claims the due sources with `FOR UPDATE SKIP LOCKED`
 * and moves each one's next due time in the same transaction, so one replica starts each due
 * sync. A due source still syncing (the one-running-sync lease) skips that time.
 */
@Injectable()
export class SourceScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(SourceScheduler.name);
  private readonly task: PeriodicTask;

  constructor(
    private readonly repository: SourcesRepository,
    @Inject(SourcesService) private readonly sources: Pick<SourcesService, 'syncOnSchedule'>,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(DOCUMENT_CONFIG)
    config: Pick<DocumentConfig, 'SOURCE_SCHEDULE_TICK_MS'>,
  ) {
    this.task = new PeriodicTask(
      'source schedules',
      config.SOURCE_SCHEDULE_TICK_MS,
      () => this.tick(),
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /** Claims what is due now and starts its syncs; answers how many started. */
  async tick(): Promise<number> {
    const now = this.clock();
    const due = await this.repository.claimDue(now, CLAIM_PER_TICK, (source) =>
      this.nextOf(source, now),
    );
    let started = 0;
    for (const { tenantId, source } of due) {
      try {
        const sync = await this.sources.syncOnSchedule(tenantId, source);
        if (sync) {
          started += 1;
          this.logger.log(`source ${source.id}: scheduled sync ${sync.id} started`);
        } else {
          this.logger.log(`source ${source.id}: still syncing, this scheduled time is skipped`);
        }
      } catch (error) {
        this.logger.warn(`source ${source.id}: scheduled sync not started: ${String(error)}`);
      }
    }
    return started;
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
