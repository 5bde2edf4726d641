import { AccessResolver } from '@kb/auth';
import { Topics } from '@kb/contracts';
import { consumerLog, EventConsumer, instanceGroup } from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { KAFKA } from '../platform/tokens';

/**
 * Policy changes in; the tenant's cached access is dropped. A group per instance: every replica
 * holds its own cache, so every replica must see every change.
 */
@Injectable()
export class AccessInvalidationConsumer {
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(DOCUMENT_CONFIG) config: Pick<DocumentConfig, 'KAFKA_GROUP_ID'>,
    access: AccessResolver,
  ) {
    this.consumer = new EventConsumer(kafka, {
      ...instanceGroup(`${config.KAFKA_GROUP_ID}-acl`),
      handlers: { [Topics.acl]: async (event) => access.invalidate(event.tenantId) },
      fromBeginning: false,
      log: consumerLog('PolicyConsumer'),
    });
  }
}
