import { AccessResolver } from '@kb/auth';
import { Topics } from '@kb/contracts';
import { consumerLog, EventConsumer, instanceGroup } from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { QUERY_CONFIG, type QueryConfig } from '../config/query.config';
import { KAFKA } from '../platform/tokens';

/**
 * `kb.acl.v1` → drops the tenant's cached access, so a revocation applies within the event's
 * delivery time. A group per instance: every replica holds its own cache.
 */
@Injectable()
export class AccessCacheConsumer {
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(QUERY_CONFIG) config: QueryConfig,
    access: AccessResolver,
  ) {
    this.consumer = new EventConsumer(kafka, {
      ...instanceGroup(`${config.KAFKA_GROUP_ID}-acl`),
      handlers: { [Topics.acl]: async (event) => access.invalidate(event.tenantId) },
      fromBeginning: false,
      log: consumerLog(AccessCacheConsumer.name),
    });
  }
}
