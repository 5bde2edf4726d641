// Moves the services' shared consumer groups past every event already in the topics, before the
// e2e tier starts its suites (`npm test`). Each suite reads only the events of its own run; an
// earlier run that was stopped half-way leaves thousands of events whose documents, buckets or
// databases are gone, and a suite's documents then wait behind their retries until they time out.
// A group with members (`npm start` running beside the tests) is left as it is.
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const GROUPS = [
  'document-service',
  'parser-service',
  'embedding-service',
  'indexing-service',
  'webhook-service',
  'acl-service-audit',
  'acl-service-document-grants',
  'document-service-usage',
];

async function main() {
  const kafka = new Kafka({
    clientId: 'kb-test-groups',
    brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter(
      (t) => t.startsWith('kb.') && !t.startsWith('kb.dlq.'),
    );
    const ends = new Map(
      await Promise.all(topics.map(async (t) => [t, await admin.fetchTopicOffsets(t)])),
    );
    const { groups } = await admin.describeGroups(GROUPS);
    const idle = groups.filter((g) => g.members.length === 0).map((g) => g.groupId);
    const moved = await Promise.all(
      idle.map(async (groupId) => {
        let skipped = 0;
        for (const { topic, partitions } of await admin.fetchOffsets({ groupId, topics })) {
          if (!partitions.some((p) => Number(p.offset) >= 0)) continue;
          const end = ends.get(topic);
          for (const p of partitions) {
            const last = Number(end.find((e) => e.partition === p.partition)?.offset ?? 0);
            if (Number(p.offset) >= 0) skipped += last - Number(p.offset);
          }
          await admin.setOffsets({
            groupId,
            topic,
            partitions: end.map(({ partition, offset }) => ({ partition, offset })),
          });
        }
        return `${groupId} ${skipped}`;
      }),
    );
    process.stderr.write(
      `kafka: events skipped by the shared groups: ${moved.join(', ') || 'none'}\n`,
    );
  } finally {
    await admin.disconnect();
  }
}

main().catch((error) => {
  // Not fatal: the suites then start behind whatever is left.
  process.stderr.write(`kafka: the shared groups were not moved: ${error.message}\n`);
});
