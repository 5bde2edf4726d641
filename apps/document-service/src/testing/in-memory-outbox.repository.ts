import { parseEnvelope, type Topic, type TopicEnvelope, Topics } from '@kb/contracts';

import {
  type OutboxMessage,
  OutboxRepository,
  type StoredOutboxMessage,
} from '../outbox/outbox.repository';
import type { Trx } from '../platform/transaction.runner';
import { clone, type InMemoryDatabase } from './in-memory.database';
import { openTrx } from './in-memory-transaction.runner';

export class InMemoryOutboxRepository extends OutboxRepository {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async insert(trx: Trx, message: OutboxMessage): Promise<void> {
    const id = this.db.outboxId();
    const { id: trxId } = openTrx(trx);
    this.db.outbox.push({ ...clone(message), id, trx: trxId });
    this.db.writes.push({ trx: trxId, table: 'outbox', op: 'insert', key: message.key });
  }

  async insertMany(trx: Trx, messages: OutboxMessage[]): Promise<void> {
    for (const message of messages) await this.insert(trx, message);
  }

  async claim(trx: Trx, limit: number): Promise<StoredOutboxMessage[]> {
    openTrx(trx);
    // As in SQL: audit records after every other message, each lane in insertion order.
    const isAudit = (message: OutboxMessage) => message.topic === Topics.audit;
    return [...this.db.outbox.filter((m) => !isAudit(m)), ...this.db.outbox.filter(isAudit)]
      .slice(0, limit)
      .map(({ trx: _trx, ...message }) => message);
  }

  async delete(trx: Trx, ids: string[]): Promise<void> {
    openTrx(trx);
    this.db.outbox = this.db.outbox.filter((message) => !ids.includes(message.id));
  }

  async backlog(): Promise<number> {
    return this.db.outbox.length;
  }

  /**
   * The envelopes waiting on `topic`, oldest first, with the transaction that wrote each; each is
   * parsed with the topic's schema, so an event that breaks the contract fails the spec.
   */
  envelopes<T extends Topic>(topic: T): Array<TopicEnvelope<T> & { key: string; trx: number }> {
    return this.db.outbox
      .filter((message) => message.topic === topic)
      .map((message) => ({
        ...parseEnvelope(topic, JSON.parse(message.payload)),
        key: message.key,
        trx: message.trx,
      }));
  }
}
