import { ScheduledTask } from '@kb/timing';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { RetentionService } from './retention.service';

/**
 * Runs retention (docs/adr/0052) every RETENTION_TICK_MS on each replica (0: off). Replicas do
 * not coordinate beyond the claim: each run deletes rows it locked `FOR UPDATE SKIP LOCKED`, so
 * two replicas share the due documents instead of deleting one twice.
 */
@Injectable()
export class RetentionScheduler extends ScheduledTask {
  constructor(
    @Inject(RetentionService) retention: Pick<RetentionService, 'run'>,
    @Inject(DOCUMENT_CONFIG) config: Pick<DocumentConfig, 'RETENTION_TICK_MS'>,
  ) {
    super(
      'retention',
      config.RETENTION_TICK_MS,
      () => retention.run(),
      new Logger(RetentionScheduler.name),
    );
  }
}
