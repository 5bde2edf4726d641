import { Topics } from '@kb/contracts';
import { consumerLog, EventConsumer } from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { ACL_CONFIG, type AclConfig } from '../config/acl.config';
import { KAFKA } from '../platform/tokens';
import { AuditRepository } from './audit.repository';

/**
 * `kb.audit.v1` (searches from query-service, ACL changes from document-service) → the audit log.
 * One group for the service: each record is stored once. Records are stored a fetched batch at a
 * time, in one INSERT (a busy query-service sends hundreds a second: one statement and one offset
 * commit each cost acl-service most of a core, docs/adr/0029); a batch that fails for good is
 * stored one record at a time.
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
      batchHandlers: {
        [Topics.audit]: (events) =>
          audit.insertMany(
            events.map((event) => ({ tenantId: event.tenantId, event: event.payload })),
          ),
      },
      log: consumerLog(AuditConsumer.name),
    });
  }
}
