import {
  newEnvelope,
  type TenantId,
  type Topic,
  topicEventTypes,
  type TopicPayload,
} from '@kb/contracts';
import { captureTraceHeaders } from '@kb/observability';
import { Injectable } from '@nestjs/common';

import type { Trx } from '../platform/transaction.runner';
import { type OutboxMessage, OutboxRepository } from './outbox.repository';

/**
 * The one way events leave this service: written to the outbox in the transaction of the change
 * they announce (transactional outbox), then published by `OutboxRelay`. Each carries the trace
 * context of the code that wrote it, so the consumers' spans continue that trace.
 */
@Injectable()
export class OutboxWriter {
  constructor(private readonly outbox: OutboxRepository) {}

  async enqueue<T extends Topic>(
    trx: Trx,
    topic: T,
    tenantId: TenantId,
    key: string,
    payload: TopicPayload<T>,
  ): Promise<void> {
    await this.outbox.insert(trx, this.message(topic, tenantId, key, payload));
  }

  /** The outbox row of an event, for a statement that writes it itself (`ListingRead`). */
  message<T extends Topic>(
    topic: T,
    tenantId: TenantId,
    key: string,
    payload: TopicPayload<T>,
  ): OutboxMessage {
    return {
      topic,
      key,
      payload: JSON.stringify(newEnvelope(topicEventTypes[topic], tenantId, payload)),
      headers: captureTraceHeaders(),
    };
  }

  /** Many events of one topic at once, each with its key, in their order. */
  async enqueueMany<T extends Topic>(
    trx: Trx,
    topic: T,
    tenantId: TenantId,
    events: Array<{ key: string; payload: TopicPayload<T> }>,
  ): Promise<void> {
    const headers = captureTraceHeaders();
    await this.outbox.insertMany(
      trx,
      events.map(({ key, payload }) => ({
        topic,
        key,
        payload: JSON.stringify(newEnvelope(topicEventTypes[topic], tenantId, payload)),
        headers,
      })),
    );
  }
}
