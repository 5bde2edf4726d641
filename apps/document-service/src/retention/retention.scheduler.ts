import { PeriodicTask } from '@kb/timing';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { RetentionService } from './retention.service';

/**
 * Runs retention (docs/adr/0052) every RETENTION_TICK_MS on each replica (0: off). Replicas do
 * not coordinate beyond the claim: each run deletes rows it locked `FOR UPDATE SKIP LOCKED`, so
 * two replicas share the due documents instead of deleting one twice. Small on purpose: it moves
 * onto the job queue (libs/jobs, issue 35) as one periodic job.
 */
@Injectable()
export class RetentionScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RetentionScheduler.name);
  private readonly task: PeriodicTask;

  constructor(
    @Inject(RetentionService) retention: Pick<RetentionService, 'run'>,
    @Inject(DOCUMENT_CONFIG) config: Pick<DocumentConfig, 'RETENTION_TICK_MS'>,
  ) {
    this.task = new PeriodicTask(
      'retention',
      config.RETENTION_TICK_MS,
      async () => void (await retention.run()),
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }
}
