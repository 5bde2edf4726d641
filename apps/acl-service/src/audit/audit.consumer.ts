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
 * stored one record at a time. Nobody waits for a record, so a fetch waits for 64 KiB of them or
 * half a second: answered at once, each search's record was a fetch, a commit and a heartbeat of
 * its own (4–7 ms of acl-service CPU per search at one search at a time).
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
      fetch: { minBytes: 64 * 1024, maxWaitMs: 500 },
    });
  }
}
