import { deadLetterTopic, type Topic, type TopicEnvelope } from '@kb/contracts';
import { withConsumedMessage } from '@kb/observability';
import { backoffDelay } from '@kb/timing';
import { backOff } from 'exponential-backoff';
import {
  type Admin,
  type Consumer,
  type EachBatchPayload,
  type Kafka,
  Partitioners,
} from 'kafkajs';

import { ConsumerLagReporter } from './consumer-lag';
import { DeliveryCounter } from './delivery-count';
import { ensureTopics } from './kafka';
import { type BatchContext, HEARTBEAT_MS, MessageHandling } from './message-handling';
import { Waiter } from './retry-wait';

export type EventHandler<T extends Topic> = (event: TopicEnvelope<T>) => Promise<void>;

export type HandlerMap = { [T in Topic]?: EventHandler<T> };

/**
 * Handles the well-formed events of one fetched batch of a partition at once (e.g. one multi-row
 * INSERT instead of one per event). All or nothing: it must be idempotent as a whole.
 */
export type BatchEventHandler<T extends Topic> = (events: TopicEnvelope<T>[]) => Promise<void>;

export type BatchHandlerMap = { [T in Topic]?: BatchEventHandler<T> };

export interface DeadLetter {
  topic: string;
  key: string | null;
  /**
   * Machine-readable reason: `malformed_message`, a PermanentError's reason, `retries_exhausted`,
   * or `delivery_limit` (the consumer died handling it `maxDeliveries` times).
   */
  reason: string;
  /** The error's text, for operators (the dead-letter topic's headers and the logs). */
  error: string;
  /**
   * True when a PermanentError gave up: its message was written for whoever sent the document and
   * may be shown to them; any other error's text may name hosts, SQL or S3 internals.
   */
  permanent: boolean;
  /** The parsed envelope, when the message was well-formed. */
  envelope?: TopicEnvelope<Topic>;
}

export interface ConsumerOptions {
  groupId: string;
  /**
   * The group whose dead-letter topic (`kb.dlq.<group>.v1`) receives this consumer's dead
   * letters; default `groupId`. A group of one process (`instanceGroup`) names its service's
   * group here, so its dead letters do not land in a topic of its own that outlives it.
   */
  deadLetterGroup?: string;
  handlers: HandlerMap;
  /**
   * Topics whose messages are handled a fetched batch at a time (one call per partition batch)
   * rather than one by one; they need a one-event handler in `handlers` too, which takes over
   * when a batch fails for good (so the message at fault alone is dead-lettered) or when the
   * previous delivery of a batch died without an outcome.
   */
  batchHandlers?: BatchHandlerMap;
  /** Attempts per delivery before a message that keeps failing (not transiently) is dead-lettered. */
  maxAttempts?: number;
  initialBackoffMs?: number;
  /**
   * Deliveries without an outcome (the process died handling it) before a message is
   * dead-lettered as `delivery_limit`; counted in Kafka, across restarts (ADR 17).
   */
  maxDeliveries?: number;
  /** The longest pause between two tries while a dependency is away (default 30 s). */
  maxTransientBackoffMs?: number;
  /** The group session: a member silent this long is dropped (default 30 s). */
  sessionTimeoutMs?: number;
  /** Called after a message went to the dead-letter topic, e.g. to mark the document failed. */
  onDeadLetter?: (letter: DeadLetter) => Promise<void>;
  log?: (message: string, context: Record<string, unknown>) => void;
  /** Read a new group's topics from the start (default) or only what arrives from now on. */
  fromBeginning?: boolean;
  /**
   * How a fetch waits for messages: the broker answers once `minBytes` are there or after
   * `maxWaitMs`. Default: at once (kafkajs' `minBytes` 1), right for work someone waits for; a
   * consumer of records nobody waits for (the audit log) batches them and fetches less often.
   */
  fetch?: { minBytes: number; maxWaitMs: number };
}

/** Whether the consumer is in its group and hears from the broker (a readiness condition). */
export interface ConsumerHealth {
  ok: boolean;
  /** Why not, in words safe to show on a public probe. */
  reason?: string;
}

/**
 * Runs a consumer group over typed topics (ADR 14, ADR 17). Each message is validated against
 * its topic's schema and handled; what happens on failure depends on the error's class:
 * - transient (a dependency is away): tried again with capped exponential backoff for as long as
 *   it lasts, heartbeating so the group does not rebalance; never dead-lettered;
 * - permanent (the input itself): dead-lettered at once;
 * - anything else: `maxAttempts` tries with backoff, then dead-lettered (`retries_exhausted`).
 * Deliveries are counted in Kafka before handling, so a message that kills the process is
 * dead-lettered (`delivery_limit`) after `maxDeliveries`. Offsets are committed only after a
 * message is handled or dead-lettered (at-least-once), so handlers must be idempotent.
 */
export class EventConsumer {
  private consumer: Consumer;
  private readonly dlqProducer;
  private readonly admin: Admin;
  private readonly deliveries: DeliveryCounter;
  private readonly waiter = new Waiter();
  private readonly handling: MessageHandling;
  private readonly lag: ConsumerLagReporter;
  private joined = false;
  private lastContact = 0;
  private lastProblem: string | undefined;
  private stopping = false;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: ConsumerOptions,
  ) {
    this.consumer = this.newConsumer();
    this.dlqProducer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    this.admin = kafka.admin();
    this.deliveries = new DeliveryCounter(this.admin, options.groupId);
    this.lag = new ConsumerLagReporter(this.admin, options.groupId, Object.keys(options.handlers), {
      error: (message) =>
        options.log?.('consumer lag not read', { group: options.groupId, message }),
    });
    this.handling = new MessageHandling(
      options,
      this.deliveries,
      this.dlqProducer,
      this.waiter,
      () => this.stopping,
    );
  }

  /** True once the consumer is in its group and has heard from the broker lately. */
  get isJoined(): boolean {
    return this.health().ok;
  }

  health(): ConsumerHealth {
    if (!this.joined) {
      return { ok: false, reason: this.lastProblem ?? 'not in its consumer group yet' };
    }
    const silentMs = Date.now() - this.lastContact;
    if (silentMs > this.sessionTimeoutMs) {
      return {
        ok: false,
        reason: `no answer from the broker for ${Math.round(silentMs / 1000)} s`,
      };
    }
    return { ok: true };
  }

  async start(): Promise<void> {
    const topics = Object.keys(this.options.handlers);
    await ensureTopics(this.kafka, [
      ...topics,
      deadLetterTopic(this.options.deadLetterGroup ?? this.options.groupId),
    ]);
    await this.dlqProducer.connect();
    await this.admin.connect();
    await this.run(this.consumer);
    this.lag.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.waiter.wakeAll();
    await this.lag.stop();
    await this.consumer.disconnect();
    await this.dlqProducer.disconnect();
    await this.admin.disconnect();
  }

  private get sessionTimeoutMs(): number {
    return this.options.sessionTimeoutMs ?? 30_000;
  }

  private newConsumer(): Consumer {
    const consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      sessionTimeout: this.sessionTimeoutMs,
      heartbeatInterval: HEARTBEAT_MS,
      ...(this.options.fetch
        ? { minBytes: this.options.fetch.minBytes, maxWaitTimeInMs: this.options.fetch.maxWaitMs }
        : {}),
    });
    const { events } = consumer;
    const contact = () => {
      this.lastContact = Date.now();
    };
    consumer.on(events.GROUP_JOIN, () => {
      this.joined = true;
      this.lastProblem = undefined;
      this.deliveries.forget();
      contact();
    });
    for (const event of [events.HEARTBEAT, events.FETCH, events.COMMIT_OFFSETS]) {
      consumer.on(event, contact);
    }
    consumer.on(events.CRASH, ({ payload }) => {
      this.joined = false;
      this.lastProblem = `crashed (${payload.error.name}); ${payload.restart ? 'restarting' : 'rebuilding'}`;
      this.options.log?.('consumer crashed', {
        group: this.options.groupId,
        error: String(payload.error),
        restart: payload.restart,
      });
      // kafkajs restarts after a retriable crash; after any other, build a new consumer.
      if (!payload.restart && !this.stopping) void this.rebuild();
    });
    consumer.on(events.STOP, () => {
      this.joined = false;
    });
    return consumer;
  }

  private async run(consumer: Consumer): Promise<void> {
    const topics = Object.keys(this.options.handlers);
    await consumer.connect();
    await backOff(
      () => consumer.subscribe({ topics, fromBeginning: this.options.fromBeginning ?? true }),
      { numOfAttempts: 8, startingDelay: 250, maxDelay: 5_000 },
    );
    await consumer.run({
      // Partitions are processed in parallel; one document's events share a key, so stay ordered.
      partitionsConsumedConcurrently: 3,
      // A batch may end early (stop, rebalance): only the messages handled are resolved.
      eachBatchAutoResolve: false,
      eachBatch: (payload) => this.handleBatch(payload),
    });
  }

  /** After a crash kafkajs does not restart from: a new consumer, until one runs. */
  private async rebuild(): Promise<void> {
    for (let attempt = 1; !this.stopping; attempt++) {
      await this.waiter.sleep(backoffDelay(attempt, { initialMs: 1_000, maxMs: 30_000 }));
      if (this.stopping) return;
      try {
        await this.consumer.disconnect().catch(() => undefined);
        this.consumer = this.newConsumer();
        await this.run(this.consumer);
        return;
      } catch (error) {
        this.lastProblem = `cannot rejoin (${errorName(error)})`;
        this.options.log?.('consumer rebuild failed', { attempt, error: String(error) });
      }
    }
  }

  private async handleBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale } =
      payload;
    const context: BatchContext = {
      topic: batch.topic,
      partition: batch.partition,
      heartbeat,
      commit: commitOffsetsIfNecessary,
    };
    const messages = batch.messages;
    const batchHandler = this.options.batchHandlers?.[batch.topic as Topic];
    if (batchHandler && messages.length > 1 && isRunning() && !isStale() && !this.stopping) {
      if (
        await this.handling.handleAll(context, messages, batchHandler as BatchEventHandler<Topic>)
      ) {
        resolveOffset(messages[messages.length - 1]!.offset);
        await heartbeat();
        return;
      }
    }
    for (const message of messages) {
      if (!isRunning() || isStale() || this.stopping) break;
      await withConsumedMessage(batch.topic, message.headers, () =>
        this.handling.handle(context, message),
      );
      resolveOffset(message.offset);
      await heartbeat();
    }
  }
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
