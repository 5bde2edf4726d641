import { deadLetterTopic, parseEnvelope, type Topic, type TopicEnvelope } from '@kb/contracts';
import { classifyError, ErrorClass, isPermanent } from '@kb/errors';
import { meter, withConsumedMessage } from '@kb/observability';
import { backOff } from 'exponential-backoff';
import {
  type Admin,
  type Consumer,
  type EachBatchPayload,
  type Kafka,
  type KafkaMessage,
  Partitioners,
} from 'kafkajs';

import { type CommitOffset, DeliveryCounter } from './delivery-count';
import { ensureTopics } from './kafka';
import { backoffDelay, ConsumerStoppingError, isRebalance, Waiter } from './retry-wait';

const handled = meter().createCounter('kb_events_handled_total', {
  description: 'Kafka messages handled successfully, by topic and consumer group',
});
const deadLettered = meter().createCounter('kb_events_dead_lettered_total', {
  description: 'Kafka messages sent to a dead-letter topic, by topic, group and reason',
});
const retried = meter().createCounter('kb_events_retried_total', {
  description: 'Handler retries, by topic, group and class (transient: a dependency is away)',
});
const handleDuration = meter().createHistogram('kb_event_handle_duration_ms', {
  description: 'Time to handle one message, retries included',
  unit: 'ms',
});

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

const HEARTBEAT_MS = 3_000;

/** What one partition's batch gives a handler: heartbeats and commits through kafkajs. */
interface BatchContext {
  topic: string;
  partition: number;
  heartbeat: () => Promise<void>;
  commit: CommitOffset;
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
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.waiter.wakeAll();
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
      await this.waiter.sleep(backoffDelay(attempt, 1_000, 30_000));
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
      if (await this.handleAll(context, messages, batchHandler as BatchEventHandler<Topic>)) {
        resolveOffset(messages[messages.length - 1]!.offset);
        await heartbeat();
        return;
      }
    }
    for (const message of messages) {
      if (!isRunning() || isStale() || this.stopping) break;
      await withConsumedMessage(batch.topic, message.headers, () => this.handle(context, message));
      resolveOffset(message.offset);
      await heartbeat();
    }
  }

  /**
   * One batch handler call for a partition's batch; the delivery is counted once, on the batch's
   * first offset. False (the caller goes one by one) when the last delivery of that batch died,
   * when a message is malformed, or when the handler keeps failing (not transiently): each
   * message then meets its own verdict.
   */
  private async handleAll(
    context: BatchContext,
    messages: KafkaMessage[],
    handler: BatchEventHandler<Topic>,
  ): Promise<boolean> {
    const topic = context.topic as Topic;
    const deliveries = await this.deliveries.begin(
      topic,
      context.partition,
      messages[0]!.offset,
      context.commit,
    );
    if (deliveries > 1) return false;
    // Going one by one after this delivery survived: it must not count towards the poison limit
    // of the batch's first message, whose own handling counts again.
    const oneByOne = async (): Promise<false> => {
      await this.deliveries.forgive(topic, context.partition, messages[0]!.offset, context.commit);
      return false;
    };
    const envelopes: TopicEnvelope<Topic>[] = [];
    for (const message of messages) {
      try {
        envelopes.push(parseEnvelope(topic, JSON.parse(message.value?.toString() ?? 'null')));
      } catch {
        return oneByOne();
      }
    }
    const labels = { topic, group: this.options.groupId };
    const started = performance.now();
    let failures = 0;
    let waits = 0;
    try {
      for (;;) {
        try {
          await this.withHeartbeats(context, () => handler(envelopes));
          handled.add(envelopes.length, labels);
          return true;
        } catch (error) {
          if (this.stopping) throw new ConsumerStoppingError(error);
          const errorClass = classifyError(error);
          if (errorClass === ErrorClass.Permanent || failures + 1 >= this.maxAttempts(errorClass)) {
            this.options.log?.('batch handler failed, handling one by one', {
              topic,
              messages: messages.length,
              error: String(error),
            });
            return oneByOne();
          }
          if (errorClass === ErrorClass.Transient) waits += 1;
          else failures += 1;
          retried.add(1, { ...labels, class: errorClass });
          await this.pause(
            context,
            errorClass === ErrorClass.Transient
              ? backoffDelay(
                  waits,
                  this.initialBackoffMs,
                  this.options.maxTransientBackoffMs ?? 30_000,
                )
              : backoffDelay(failures, this.initialBackoffMs, 10_000),
          );
        }
      }
    } finally {
      handleDuration.record(performance.now() - started, labels);
    }
  }

  private async handle(context: BatchContext, message: KafkaMessage): Promise<void> {
    const topic = context.topic as Topic;
    const key = message.key?.toString() ?? null;
    const deliveries = await this.deliveries.begin(
      topic,
      context.partition,
      message.offset,
      context.commit,
    );
    let envelope: TopicEnvelope<Topic>;
    try {
      envelope = parseEnvelope(topic, JSON.parse(message.value?.toString() ?? 'null'));
    } catch (error) {
      await this.deadLetter(context, message, {
        topic,
        key,
        reason: 'malformed_message',
        error: String(error),
        permanent: true,
      });
      return;
    }
    const maxDeliveries = this.options.maxDeliveries ?? 3;
    if (deliveries > maxDeliveries) {
      await this.deadLetter(context, message, {
        topic,
        key,
        reason: 'delivery_limit',
        error: `delivered ${deliveries - 1} times without an outcome: the consumer died handling it`,
        permanent: false,
        envelope,
      });
      return;
    }
    const handler = this.options.handlers[topic] as EventHandler<Topic>;
    const started = performance.now();
    const labels = { topic, group: this.options.groupId };
    try {
      await this.untilOutcome(context, message, envelope, () => handler(envelope));
    } finally {
      handleDuration.record(performance.now() - started, labels);
    }
  }

  /**
   * Runs the handler until it succeeds, or a verdict sends the message to the dead-letter topic.
   * Throws only when the consumer stops or the group rebalances: the message is then redelivered.
   */
  private async untilOutcome(
    context: BatchContext,
    message: KafkaMessage,
    envelope: TopicEnvelope<Topic>,
    attempt: () => Promise<void>,
  ): Promise<void> {
    const topic = context.topic;
    const key = message.key?.toString() ?? null;
    const labels = { topic, group: this.options.groupId };
    let failures = 0;
    let waits = 0;
    for (;;) {
      try {
        await this.withHeartbeats(context, attempt);
        handled.add(1, labels);
        return;
      } catch (error) {
        if (this.stopping) throw new ConsumerStoppingError(error);
        const errorClass = classifyError(error);
        if (errorClass === ErrorClass.Permanent || failures + 1 >= this.maxAttempts(errorClass)) {
          const permanent = isPermanent(error);
          await this.deadLetter(context, message, {
            topic,
            key,
            reason: permanent ? error.reason : 'retries_exhausted',
            error: errorMessage(error),
            permanent,
            envelope,
          });
          return;
        }
        let delayMs: number;
        if (errorClass === ErrorClass.Transient) {
          // The process survived this delivery: it must not count towards the poison limit.
          if (waits === 0) {
            await this.deliveries.forgive(topic, context.partition, message.offset, context.commit);
          }
          waits += 1;
          delayMs = backoffDelay(
            waits,
            this.initialBackoffMs,
            this.options.maxTransientBackoffMs ?? 30_000,
          );
        } else {
          failures += 1;
          delayMs = backoffDelay(failures, this.initialBackoffMs, 10_000);
        }
        retried.add(1, { ...labels, class: errorClass });
        this.options.log?.(
          errorClass === ErrorClass.Transient
            ? 'a dependency is away, waiting'
            : 'handler failed, retrying',
          { topic, key, attempt: failures + waits, delayMs, error: String(error) },
        );
        await this.pause(context, delayMs);
      }
    }
  }

  private maxAttempts(errorClass: ErrorClass): number {
    return errorClass === ErrorClass.Transient ? Infinity : (this.options.maxAttempts ?? 5);
  }

  private get initialBackoffMs(): number {
    return this.options.initialBackoffMs ?? 200;
  }

  /**
   * Runs a handler while heartbeating every few seconds: a long one (a big document, a slow model)
   * keeps its group membership and shows the broker is reachable.
   */
  private async withHeartbeats(context: BatchContext, work: () => Promise<void>): Promise<void> {
    const timer = setInterval(() => {
      context.heartbeat().catch(() => undefined); // a rebalance is noticed after the handler
    }, HEARTBEAT_MS);
    try {
      await work();
    } finally {
      clearInterval(timer);
    }
  }

  /** Waits `ms`, heartbeating; a rebalance or a stop ends the wait by throwing. */
  private async pause(context: BatchContext, ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (!this.stopping && Date.now() < until) {
      await this.waiter.sleep(Math.min(HEARTBEAT_MS, until - Date.now()));
      try {
        await context.heartbeat();
      } catch (error) {
        // Another member joined: give the partition up now, the message is redelivered.
        if (isRebalance(error)) throw error;
        // The broker is away too: keep waiting; kafkajs reconnects.
      }
    }
    if (this.stopping) throw new ConsumerStoppingError();
  }

  private async deadLetter(
    context: BatchContext,
    message: KafkaMessage,
    letter: DeadLetter,
  ): Promise<void> {
    this.options.log?.('message dead-lettered', { ...letter, envelope: undefined });
    deadLettered.add(1, {
      topic: letter.topic,
      group: this.options.groupId,
      reason: letter.reason,
    });
    // Publishing the letter and marking the document wait out an outage like a handler does.
    await this.untilSent(context, async () => {
      await this.dlqProducer.send({
        topic: deadLetterTopic(this.options.deadLetterGroup ?? this.options.groupId),
        acks: -1,
        messages: [
          {
            key: message.key,
            value: message.value,
            headers: {
              ...message.headers,
              'x-dlq-source-topic': letter.topic,
              'x-dlq-reason': letter.reason,
              'x-dlq-error': letter.error.slice(0, 1000),
            },
          },
        ],
      });
    });
    const onDeadLetter = this.options.onDeadLetter;
    if (onDeadLetter) await this.untilSent(context, () => onDeadLetter(letter));
  }

  /** Retries `send` while its failure is transient (forever) or up to `maxAttempts` otherwise. */
  private async untilSent(context: BatchContext, send: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await send();
        return;
      } catch (error) {
        if (this.stopping) throw new ConsumerStoppingError(error);
        const errorClass = classifyError(error);
        if (errorClass !== ErrorClass.Transient && attempt >= (this.options.maxAttempts ?? 5)) {
          throw error;
        }
        this.options.log?.('dead-lettering failed, retrying', { attempt, error: String(error) });
        await this.pause(context, backoffDelay(attempt, this.initialBackoffMs, 30_000));
      }
    }
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
