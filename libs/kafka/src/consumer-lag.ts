import { meter } from '@kb/observability';
import { PeriodicTask, type TaskLogger } from '@kb/timing';
import type { Admin } from 'kafkajs';

/** How often each consumer group's lag is read from the broker (two admin calls a topic). */
export const LAG_INTERVAL_MS = 15_000;

/**
 * The messages a group has still to read on each topic: the sum over partitions of the latest
 * offset minus the group's committed one (a partition the group never committed counts from the
 * earliest offset kept). Pure, for the tests.
 */
export function lagOf(
  latest: Array<{ partition: number; offset: string; low?: string }>,
  committed: Array<{ partition: number; offset: string }>,
): number {
  const done = new Map(committed.map((p) => [p.partition, Number(p.offset)]));
  let lag = 0;
  for (const partition of latest) {
    const end = Number(partition.offset);
    const at = done.get(partition.partition) ?? -1;
    const from = at >= 0 ? at : Number(partition.low ?? 0);
    lag += Math.max(0, end - from);
  }
  return lag;
}

/** Every reporter of this process, read by the one `kb_consumer_lag` gauge. */
const reporters = new Set<ConsumerLagReporter>();
let registered = false;

function registerGauge(): void {
  if (registered) return;
  registered = true;
  meter()
    .createObservableGauge('kb_consumer_lag', {
      description:
        'Messages a consumer group has still to read on a topic (latest offset minus committed), read every 15 s',
    })
    .addCallback((result) => {
      for (const reporter of reporters) {
        for (const [topic, lag] of reporter.lags) {
          result.observe(lag, { group: reporter.groupId, topic });
        }
      }
    });
}

/**
 * `kb_consumer_lag{group,topic}` for one consumer group (docs/adr/0041): every LAG_INTERVAL_MS
 * it reads the topics' latest offsets and the group's committed ones with the consumer's admin
 * client, and the gauge reports the last values read.
 */
export class ConsumerLagReporter {
  readonly lags = new Map<string, number>();
  private readonly task: PeriodicTask;

  constructor(
    private readonly admin: Admin,
    readonly groupId: string,
    private readonly topics: string[],
    logger: TaskLogger,
    intervalMs = LAG_INTERVAL_MS,
  ) {
    this.task = new PeriodicTask(
      `consumer lag of ${groupId}`,
      intervalMs,
      () => this.read(),
      logger,
    );
  }

  start(): void {
    registerGauge();
    reporters.add(this);
    this.task.start();
    void this.read().catch(() => undefined);
  }

  async stop(): Promise<void> {
    reporters.delete(this);
    await this.task.stop();
  }

  /** Reads every topic's lag once (also the first reading at start). */
  async read(): Promise<void> {
    const committed = await this.admin.fetchOffsets({ groupId: this.groupId, topics: this.topics });
    for (const { topic, partitions } of committed) {
      const latest = await this.admin.fetchTopicOffsets(topic);
      this.lags.set(topic, lagOf(latest, partitions));
    }
  }
}
