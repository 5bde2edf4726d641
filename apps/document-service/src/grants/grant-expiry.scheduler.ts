import { ScheduledTask } from '@kb/timing';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { GrantExpiryService } from './grant-expiry.service';

/**
 * Runs the ended-grant job (docs/adr/0054) every GRANT_EXPIRY_TICK_MS on each replica (0: off).
 * Replicas share the work through the row lock; one that finds an ACL already stripped skips it.
 */
@Injectable()
export class GrantExpiryScheduler extends ScheduledTask {
  constructor(
    @Inject(GrantExpiryService) grants: Pick<GrantExpiryService, 'run'>,
    @Inject(DOCUMENT_CONFIG) config: Pick<DocumentConfig, 'GRANT_EXPIRY_TICK_MS'>,
  ) {
    super(
      'grant expiry',
      config.GRANT_EXPIRY_TICK_MS,
      () => grants.run(),
      new Logger(GrantExpiryScheduler.name),
    );
  }
}
