import { PeriodicTask } from '@kb/timing';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { GrantExpiryService } from './grant-expiry.service';

/**
 * Runs the ended-grant job (docs/adr/0054) every GRANT_EXPIRY_TICK_MS on each replica (0: off).
 * Replicas share the work through the row lock; one that finds an ACL already stripped skips it.
 */
@Injectable()
export class GrantExpiryScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(GrantExpiryScheduler.name);
  private readonly task: PeriodicTask;

  constructor(
    @Inject(GrantExpiryService) grants: Pick<GrantExpiryService, 'run'>,
    @Inject(DOCUMENT_CONFIG) config: Pick<DocumentConfig, 'GRANT_EXPIRY_TICK_MS'>,
  ) {
    this.task = new PeriodicTask(
      'grant expiry',
      config.GRANT_EXPIRY_TICK_MS,
      async () => void (await grants.run()),
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
