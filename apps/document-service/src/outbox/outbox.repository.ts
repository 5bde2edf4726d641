import { Topics } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { type Kysely, sql } from 'kysely';

import type { DocumentDatabase } from '../platform/db.types';
import { DB } from '../platform/tokens';
import { sqlOf, type Trx } from '../platform/transaction.runner';

/** An event waiting to be published, as the outbox holds it. */
export interface OutboxMessage {
  topic: string;
  key: string;
  /** The serialized envelope. */
  payload: string;
  /** The trace context of the request that wrote it. */
  headers: Record<string, string>;
}

export interface StoredOutboxMessage extends OutboxMessage {
  id: string;
}

/**
 * The outbox table. Not scoped to a tenant, by design: every tenant's events go through the one
 * relay, in insertion order (the tenant is inside each envelope).
 */
export abstract class OutboxRepository {
  abstract insert(trx: Trx, message: OutboxMessage): Promise<void>;
  /** Many messages, in their order, in few statements (emptying a knowledge base). */
  abstract insertMany(trx: Trx, messages: OutboxMessage[]): Promise<void>;
  /**
   * The oldest `limit` messages, audit records after every other message (two lanes, each in
   * insertion order), locked until `trx` ends; those other relays hold are skipped.
   */
  abstract claim(trx: Trx, limit: number): Promise<StoredOutboxMessage[]>;
  abstract delete(trx: Trx, ids: string[]): Promise<void>;
  /** Messages waiting to be published. */
  abstract backlog(): Promise<number>;
}

/** Rows per INSERT: 4 parameters each, well under Postgres's 65,535 bound parameters. */
const INSERT_BATCH = 2000;

@Injectable()
export class SqlOutboxRepository extends OutboxRepository {
  constructor(@Inject(DB) private readonly db: Kysely<DocumentDatabase>) {
    super();
  }

  async insert(trx: Trx, message: OutboxMessage): Promise<void> {
    await sqlOf(trx)
      .insertInto('outbox')
      .values({
        topic: message.topic,
        message_key: message.key,
        payload: message.payload,
        headers: JSON.stringify(message.headers),
      })
      .execute();
  }

  async insertMany(trx: Trx, messages: OutboxMessage[]): Promise<void> {
    for (let at = 0; at < messages.length; at += INSERT_BATCH) {
      await sqlOf(trx)
        .insertInto('outbox')
        .values(
          messages.slice(at, at + INSERT_BATCH).map((message) => ({
            topic: message.topic,
            message_key: message.key,
            payload: message.payload,
            headers: JSON.stringify(message.headers),
          })),
        )
        .execute();
    }
  }

  async claim(trx: Trx, limit: number): Promise<StoredOutboxMessage[]> {
    const rows = await sqlOf(trx)
      .selectFrom('outbox')
      .selectAll()
      // A burst of audit records (one per search) must not hold up document events.
      .orderBy(sql`(topic = ${sql.lit(Topics.audit)})`)
      .orderBy('id')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute();
    return rows.map((row) => ({
      id: row.id,
      topic: row.topic,
      key: row.message_key,
      payload: row.payload,
      headers: row.headers,
    }));
  }

  async delete(trx: Trx, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await sqlOf(trx).deleteFrom('outbox').where('id', 'in', ids).execute();
  }

  async backlog(): Promise<number> {
    const row = await this.db
      .selectFrom('outbox')
      .select(sql<string>`count(*)`.as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
