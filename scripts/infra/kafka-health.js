// Exits 0 when the broker answers a metadata request (used by the infra scripts' health check).
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const kafka = new Kafka({
  clientId: 'kb-infra-health',
  brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
  logLevel: logLevel.NOTHING,
  retry: { retries: 0 },
  connectionTimeout: 2000,
});
const admin = kafka.admin();
admin
  .connect()
  .then(() => admin.describeCluster())
  .then(async (cluster) => {
    await admin.disconnect();
    process.exit(cluster.brokers.length > 0 ? 0 : 1);
  })
  .catch(() => process.exit(1));
