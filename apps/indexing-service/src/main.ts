import 'reflect-metadata';
import { bootHttpService } from '@kb/http';
import { EventProducer, createKafka } from '@kb/kafka';
import { createLogger } from '@kb/observability';
import { s3BlobStoreFromEnv } from '@kb/storage';
import { vectorStoreFromEnv } from '@kb/vector-store';
import { AppModule } from './app.module';
import { loadIndexingConfig } from './config/indexing.config';

async function main(): Promise<void> {
  const config = loadIndexingConfig();
  const logger = createLogger('indexing-service', config.LOG_LEVEL);
  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: 'indexing-service' });
  const producer = new EventProducer(kafka);
  await producer.connect();
  const blobs = s3BlobStoreFromEnv(config);
  await blobs.ensureBucket();
  const vectors = vectorStoreFromEnv(config);
  await bootHttpService({
    module: AppModule.register({ config, kafka, producer, blobs, vectors }),
    logger,
    host: config.HOST,
    port: config.PORT,
    name: 'indexing-service',
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
