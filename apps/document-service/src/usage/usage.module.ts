import { Global, Module } from '@nestjs/common';

import { QUOTA_CHECK } from '../platform/tokens';
import { UsageConsumer } from './usage.consumer';
import { UsageController } from './usage.controller';
import { UsageRepository } from './usage.repository';
import { UsageService } from './usage.service';

/**
 * Usage by day and quotas (docs/adr/0053). Global: uploads (documents/) and knowledge-base
 * creation (knowledge-bases/) ask its `QUOTA_CHECK` first.
 */
@Global()
@Module({
  controllers: [UsageController],
  providers: [
    UsageRepository,
    UsageService,
    UsageConsumer,
    { provide: QUOTA_CHECK, useExisting: UsageService },
  ],
  exports: [QUOTA_CHECK, UsageConsumer],
})
export class UsageModule {}
