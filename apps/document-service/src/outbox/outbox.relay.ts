import { EventProducer } from '@kb/kafka';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { EVENT_PRODUCER } from '../platform/tokens';
import { TransactionRunner } from '../platform/transaction.runner';
import { OutboxRepository } from './outbox.repository';

const BATCH = 100;

/** What writers need of the relay: a nudge after they committed events. */
export interface OutboxWake {
  /** Drains the outbox now, rather than at the next poll. */
  wake(): void;
}

/** What readers need: their audit records sent soon, in one batch with the others of the window. */
export interface OutboxBatchWake {
  /** Drains the outbox within `OUTBOX_BATCH_MS`; calls meanwhile share that drain. */
  wakeSoon(): void;
}

/**
 * Publishes outbox rows to Kafka in insertion order, then deletes them, inside one transaction
 * holding row locks (SKIP LOCKED lets replicas share the work). A crash between publish and
 * commit republishes: delivery is at-least-once and consumers are idempotent.
 *
 * Writers wake it after they commit; reads wake it "soon", so a window's read audit records go in
 * one drain. The poll (`OUTBOX_POLL_MS`, 5 s) only picks up rows no wake announced: a replica that
 * stopped between its commit and its drain, a drain that failed. An idle replica polled five
 * times a second before, three statements each (docs/adr/0029, eighth pass).
 */
@Injectable()
export class OutboxRelay
  implements OutboxWake, OutboxBatchWake, OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(OutboxRelay.name);
  private timer?: NodeJS.Timeout;
  private soon?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly outbox: OutboxRepository,
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
    clearTimeout(this.soon);
    await this.running;
  }

  wakeSoon(): void {
    if (this.stopped || this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      this.wake();
    }, this.config.OUTBOX_BATCH_MS);
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
      const sent = await this.transactions.run(async (trx) => {
        const messages = await this.outbox.claim(trx, BATCH);
        // One produce request for the batch (it was one per row); each message keeps the trace
        // headers of the request that wrote it, so its consumers continue that trace.
        await this.producer.publishRaw(
          messages.map(({ topic, key, payload, headers }) => ({
            topic,
            key,
            value: payload,
            headers,
          })),
        );
        await this.outbox.delete(
          trx,
          messages.map((message) => message.id),
        );
        return messages.length;
      });
      total += sent;
      if (sent < BATCH) return total;
    }
  }

  /** Rows waiting to be published (a metric and a test hook). */
  backlog(): Promise<number> {
    return this.outbox.backlog();
  }
}
