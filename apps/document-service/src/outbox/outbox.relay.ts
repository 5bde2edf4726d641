import { EventProducer } from '@kb/kafka';
import { withTraceHeaders } from '@kb/observability';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type BeforeApplicationShutdown,
} from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import type { DocumentDatabase } from '../platform/db.types';
import { DB, EVENT_PRODUCER } from '../platform/tokens';

const BATCH = 100;

/**
 * Publishes outbox rows to Kafka in insertion order, then deletes them, inside one transaction
 * holding row locks (SKIP LOCKED lets replicas share the work). A crash between publish and
 * commit republishes: delivery is at-least-once and consumers are idempotent.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    @Inject(DB) private readonly db: Kysely<DocumentDatabase>,
    @Inject(EVENT_PRODUCER) private readonly producer: EventProducer,
    @Inject(DOCUMENT_CONFIG) private readonly config: DocumentConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.wake(), this.config.OUTBOX_POLL_MS);
    this.wake();
  }

  /** Stops before the producer closes (that happens in the later onApplicationShutdown phase). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** Drains the outbox now; coalesces calls that arrive while a drain runs. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .then(() => undefined)
      .catch((error: unknown) => this.logger.error(`outbox relay failed: ${String(error)}`))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Publishes until the outbox is empty; returns how many rows were sent. */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const sent = await this.db.transaction().execute(async (trx) => {
        const rows = await trx
          .selectFrom('outbox')
          .selectAll()
          .orderBy('id')
          .limit(BATCH)
          .forUpdate()
          .skipLocked()
          .execute();
        for (const row of rows) {
          // In the trace of the request that wrote the row, so the event continues it.
          await withTraceHeaders(row.headers, () =>
            this.producer.publishRaw(row.topic, row.message_key, row.payload),
          );
        }
        if (rows.length > 0) {
          await trx
            .deleteFrom('outbox')
            .where(
              'id',
              'in',
              rows.map((r) => r.id),
            )
            .execute();
        }
        return rows.length;
      });
      total += sent;
      if (sent < BATCH) return total;
    }
  }

  /** Rows waiting to be published (a metric and a test hook). */
  async backlog(): Promise<number> {
    const row = await this.db
      .selectFrom('outbox')
      .select(sql<string>`count(*)`.as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
