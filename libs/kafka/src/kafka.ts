import { backOff } from 'exponential-backoff';
import { type Admin, type ITopicConfig, Kafka, logLevel } from 'kafkajs';

export interface KafkaOptions {
  brokers: string[];
  clientId: string;
}

export function createKafka(options: KafkaOptions): Kafka {
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    logLevel: logLevel.WARN,
    retry: { initialRetryTime: 200, retries: 8 },
  });
}

/**
 * Creates the topics that are missing; existing topics are left as they are. Several services
 * start at once against a fresh broker, so creation races and leader elections are retried.
 */
export async function ensureTopics(
  kafka: Kafka,
  topics: string[],
  numPartitions = 3,
): Promise<void> {
  await backOff(() => createMissingTopics(kafka, topics, numPartitions), {
    numOfAttempts: 8,
    startingDelay: 250,
    maxDelay: 5_000,
    jitter: 'full',
  });
}

async function createMissingTopics(
  kafka: Kafka,
  topics: string[],
  numPartitions: number,
): Promise<void> {
  const admin: Admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing: ITopicConfig[] = topics
      .filter((topic) => !existing.has(topic))
      .map((topic) => ({ topic, numPartitions, replicationFactor: 1 }));
    if (missing.length > 0) {
      await admin.createTopics({ topics: missing, waitForLeaders: true });
    }
    // A new topic's leaders take a moment to show in metadata; throwing here retries until they do.
    await admin.fetchTopicMetadata({ topics });
  } finally {
    await admin.disconnect();
  }
}
