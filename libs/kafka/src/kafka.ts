import { readFileSync } from 'node:fs';

import { backOff } from 'exponential-backoff';
import {
  type Admin,
  type ITopicConfig,
  Kafka,
  type KafkaConfig,
  logLevel,
  type SASLOptions,
} from 'kafkajs';

/** The connection settings as `kafkaConfigSchema` (libs/config) names them. */
export interface KafkaSettings {
  KAFKA_BROKERS: string[];
  KAFKA_SSL?: boolean | undefined;
  KAFKA_SSL_CA_FILE?: string | undefined;
  KAFKA_SSL_CERT_FILE?: string | undefined;
  KAFKA_SSL_KEY_FILE?: string | undefined;
  KAFKA_SASL_MECHANISM?: 'plain' | 'scram-sha-256' | 'scram-sha-512' | undefined;
  KAFKA_SASL_USERNAME?: string | undefined;
  KAFKA_SASL_PASSWORD?: string | undefined;
}

export interface KafkaOptions {
  brokers: string[];
  clientId: string;
  /** TLS: `true` for the system CAs, or the CA / client certificate and key (PEM). */
  ssl?: KafkaConfig['ssl'];
  sasl?: SASLOptions;
}

export function createKafka(options: KafkaOptions): Kafka {
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    ...(options.ssl ? { ssl: options.ssl } : {}),
    ...(options.sasl ? { sasl: options.sasl } : {}),
    logLevel: logLevel.WARN,
    retry: { initialRetryTime: 200, retries: 8 },
  });
}

/**
 * A service's Kafka client from its config: brokers, TLS (one-way or mutual) and SASL
 * PLAIN/SCRAM. Certificates are read from files (mounted Secrets); an incomplete combination
 * fails the boot with the variable it misses. SASL without TLS is allowed (a private network),
 * but PLAIN then sends the password in clear, so pair it with KAFKA_SSL.
 */
export function kafkaFromConfig(settings: KafkaSettings, clientId: string): Kafka {
  return createKafka({ clientId, ...kafkaConnectionOf(settings) });
}

export function kafkaConnectionOf(settings: KafkaSettings): Omit<KafkaOptions, 'clientId'> {
  const { KAFKA_SSL_CERT_FILE: cert, KAFKA_SSL_KEY_FILE: key, KAFKA_SSL_CA_FILE: ca } = settings;
  if (Boolean(cert) !== Boolean(key)) {
    throw new Error('KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together (mutual TLS)');
  }
  if ((ca || cert) && !settings.KAFKA_SSL) {
    throw new Error('KAFKA_SSL_CA_FILE / KAFKA_SSL_CERT_FILE need KAFKA_SSL=true');
  }
  const ssl: KafkaConfig['ssl'] =
    settings.KAFKA_SSL && (ca || cert)
      ? {
          ...(ca ? { ca: [readFileSync(ca, 'utf8')] } : {}),
          ...(cert && key
            ? { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') }
            : {}),
        }
      : settings.KAFKA_SSL;
  return {
    brokers: settings.KAFKA_BROKERS,
    ...(ssl ? { ssl } : {}),
    ...(settings.KAFKA_SASL_MECHANISM
      ? { sasl: saslOf(settings.KAFKA_SASL_MECHANISM, settings) }
      : {}),
  };
}

function saslOf(
  mechanism: NonNullable<KafkaSettings['KAFKA_SASL_MECHANISM']>,
  settings: KafkaSettings,
): SASLOptions {
  const { KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password } = settings;
  if (!username || !password) {
    throw new Error('KAFKA_SASL_MECHANISM needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD');
  }
  switch (mechanism) {
    case 'plain':
      return { mechanism, username, password };
    case 'scram-sha-256':
      return { mechanism, username, password };
    case 'scram-sha-512':
      return { mechanism, username, password };
  }
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
