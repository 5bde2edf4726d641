import type { Admin } from 'kafkajs';

/** Commits one partition's offset with metadata (kafkajs's eachBatch `commitOffsetsIfNecessary`). */
export type CommitOffset = (offsets: {
  topics: Array<{
    topic: string;
    partitions: Array<{ partition: number; offset: string; metadata?: string | null }>;
  }>;
}) => Promise<void>;

const PREFIX = 'kb-deliveries=';

/**
 * Counts how often a message was delivered without an outcome, across process restarts (ADR 17).
 *
 * Before a message at offset O is handled, the group's committed offset of its partition is set to
 * O (unchanged in effect: every earlier message is done) with the metadata `kb-deliveries=<n>`. A
 * process that dies while handling it (out of memory, a native crash, SIGKILL) leaves that commit
 * behind, and whichever consumer gets the partition next reads it and counts on. So a message that
 * kills every consumer reaches the dead-letter topic after `maxDeliveries`, however often the
 * consumers die. The count lives with the group's offsets in Kafka: no other store, and it follows
 * the partition to another replica.
 */
export class DeliveryCounter {
  /** What this process last knew per `topic|partition`; cleared at each (re)join of the group. */
  private readonly known = new Map<string, { offset: string; deliveries: number }>();

  constructor(
    private readonly admin: Admin,
    private readonly groupId: string,
  ) {}

  /** After a rebalance another member may have counted on; read again. */
  forget(): void {
    this.known.clear();
  }

  /** Counts one more delivery of the message at `offset`, persisted before it is handled. */
  async begin(
    topic: string,
    partition: number,
    offset: string,
    commit: CommitOffset,
  ): Promise<number> {
    const previous = await this.lastKnown(topic, partition);
    const deliveries = (previous?.offset === offset ? previous.deliveries : 0) + 1;
    await this.write(topic, partition, offset, deliveries, commit);
    return deliveries;
  }

  /**
   * Takes back this delivery: the handler returned (with a transient error) instead of killing the
   * process, so it must not count towards the poison limit (a long outage spanning restarts would
   * otherwise dead-letter healthy messages).
   */
  async forgive(
    topic: string,
    partition: number,
    offset: string,
    commit: CommitOffset,
  ): Promise<void> {
    const current = this.known.get(`${topic}|${partition}`);
    if (current?.offset !== offset || current.deliveries === 0) return;
    await this.write(topic, partition, offset, current.deliveries - 1, commit);
  }

  private async write(
    topic: string,
    partition: number,
    offset: string,
    deliveries: number,
    commit: CommitOffset,
  ): Promise<void> {
    await commit({
      topics: [{ topic, partitions: [{ partition, offset, metadata: `${PREFIX}${deliveries}` }] }],
    });
    this.known.set(`${topic}|${partition}`, { offset, deliveries });
  }

  private async lastKnown(
    topic: string,
    partition: number,
  ): Promise<{ offset: string; deliveries: number } | undefined> {
    const key = `${topic}|${partition}`;
    if (!this.known.has(key)) {
      const [committed] = await this.admin.fetchOffsets({ groupId: this.groupId, topics: [topic] });
      for (const p of committed?.partitions ?? []) {
        const entry = { offset: p.offset, deliveries: parseDeliveries(p.metadata) };
        // Only the asked partition is cached: this member owns it until the next rebalance.
        if (p.partition === partition) this.known.set(key, entry);
      }
    }
    return this.known.get(key);
  }
}

/** The count in a committed offset's metadata; 0 when another writer (or nobody) committed it. */
export function parseDeliveries(metadata: string | null | undefined): number {
  if (!metadata?.startsWith(PREFIX)) return 0;
  const n = Number(metadata.slice(PREFIX.length));
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}
