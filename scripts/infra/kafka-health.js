// Exits 0 when the broker is ready for consumer groups (used by the infra scripts' health check).
//
// Answering a metadata request is not enough. A broker that has just been created makes its
// `__consumer_offsets` topic on the first group request, and a restarted one loads each of that
// topic's partitions before it coordinates the groups they hold ("The coordinator is loading").
// Tests that start right after `infra:up` then stall in their first rebalances. So this asks the
// coordinator about one group per offsets partition, and only a clean answer for all of them counts.
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const kafka = new Kafka({
  clientId: 'kb-infra-health',
  brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
  logLevel: logLevel.NOTHING,
  retry: { retries: 0 },
  connectionTimeout: 2000,
});

/** Java's String.hashCode, which Kafka uses to place a group on an offsets partition. */
function javaHashCode(text) {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(31, hash) + text.charCodeAt(i)) | 0;
  return hash;
}

/** One group id per offsets partition: Kafka maps a group to `abs(hashCode) % partitions`. */
function probeGroups(partitions) {
  const byPartition = new Map();
  for (let i = 0; byPartition.size < partitions; i++) {
    const groupId = `kb-infra-health-${i}`;
    const partition = (javaHashCode(groupId) & 0x7fffffff) % partitions;
    if (!byPartition.has(partition)) byPartition.set(partition, groupId);
  }
  return [...byPartition.values()];
}

async function ready(admin) {
  const cluster = await admin.describeCluster();
  if (cluster.brokers.length === 0) return false;
  // The first group request makes the offsets topic on a new broker; it fails until that is done.
  await admin.describeGroups(['kb-infra-health']);
  const { topics } = await admin.fetchTopicMetadata({ topics: ['__consumer_offsets'] });
  const partitions = topics[0]?.partitions.length ?? 0;
  if (partitions === 0) return false;
  // kafkajs rejects the whole answer when any group reports an error (loading, not coordinator).
  const { groups } = await admin.describeGroups(probeGroups(partitions));
  return groups.length === partitions && groups.every((group) => group.errorCode === 0);
}

const admin = kafka.admin();
admin
  .connect()
  .then(() => ready(admin))
  .then(async (ok) => {
    await admin.disconnect();
    process.exit(ok ? 0 : 1);
  })
  .catch(() => process.exit(1));
