import { createKafka } from '@kb/kafka';

/**
 * Deletes the dead-letter topics (`kb.dlq.<group>.v1`) of the consumer groups whose names start
 * with `groupPrefix`: the groups a test made for itself, whose topics would otherwise stay on the
 * broker after it.
 */
export async function deleteDeadLetterTopics(groupPrefix: string): Promise<void> {
  const kafka = createKafka({
    brokers: (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(','),
    clientId: 'e2e-cleanup',
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(`kb.dlq.${groupPrefix}`));
    if (topics.length > 0) await admin.deleteTopics({ topics });
  } finally {
    await admin.disconnect();
  }
}
