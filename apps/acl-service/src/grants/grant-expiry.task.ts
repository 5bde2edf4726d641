import { PeriodicTask } from '@kb/timing';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';

import { ACL_CONFIG, type AclConfig } from '../config/acl.config';
import { CLOCK } from '../platform/tokens';
import { PolicyService } from '../policy/policy.service';
import { type GrantEnds, GrantEndsRepository } from './grant-ends.repository';

/** Ended grants removed per run; a longer backlog waits for the next tick. */
const BATCH = 500;

/**
 * Removes ended grants from the stored policy (ADR 54): each is deleted, versioned, audited as
 * `system` and published on `kb.acl.v1`, so every replica and every caller's cache drops it.
 * Answers never waited for this: an ended grant stopped counting at its end.
 */
@Injectable()
export class GrantExpiryTask implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(GrantExpiryTask.name);
  private readonly task: PeriodicTask;

  constructor(
    private readonly policy: PolicyService,
    @Inject(GrantEndsRepository) private readonly ends: GrantEnds,
    @Inject(ACL_CONFIG) config: Pick<AclConfig, 'GRANT_EXPIRY_INTERVAL_MS'>,
    @Optional() @Inject(CLOCK) private readonly now: () => number = Date.now,
  ) {
    this.task = new PeriodicTask(
      'grant expiry',
      config.GRANT_EXPIRY_INTERVAL_MS,
      () => this.run(),
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /** One run: the number of ended grants this replica removed. */
  async run(): Promise<number> {
    let removed = 0;
    for (const end of await this.ends.ended(new Date(this.now()), BATCH)) {
      if (this.task.stopping) break;
      if (await this.policy.expire(end)) removed += 1;
    }
    if (removed > 0) this.logger.log(`removed ${removed} ended grants`);
    return removed;
  }
}
