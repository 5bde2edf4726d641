import { Topics } from '@kb/contracts';
import { consumerLog, EventConsumer } from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { ACL_CONFIG, type AclConfig } from '../config/acl.config';
import { KAFKA } from '../platform/tokens';
import { AuditRepository } from './audit.repository';

/**
 * `kb.audit.v1` (searches from query-service, ACL changes from document-service) → the audit log.
 * One group for the service: each record is stored once.
 */
@Injectable()
export class AuditConsumer {
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(ACL_CONFIG) config: AclConfig,
    audit: AuditRepository,
  ) {
    this.consumer = new EventConsumer(kafka, {
      groupId: `${config.KAFKA_GROUP_ID}-audit`,
      handlers: { [Topics.audit]: (event) => audit.insert(event.tenantId, event.payload) },
      log: consumerLog(AuditConsumer.name),
    });
  }
}
