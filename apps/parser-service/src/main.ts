import './telemetry';
import 'reflect-metadata';

import { bootHttpService } from '@kb/http';
import { KafkaEventProducer, kafkaFromConfig } from '@kb/kafka';
import { createLogger } from '@kb/observability';
import { s3BlobStoreFromEnv } from '@kb/storage';

import { AppModule } from './app.module';
import { loadTokenCounter } from './chunking/model-token.counter';
import { extractionLimitsOf, loadParserConfig } from './config/parser.config';
import { OcrPool } from './ocr/ocr.pool';
import { OcrTextExtractor } from './ocr/ocr-text.extractor';
import { WorkerTextExtractor } from './parsing/worker.extractor';

async function main(): Promise<void> {
  const config = loadParserConfig();
  const logger = createLogger('parser-service', config.LOG_LEVEL);
  const tokens = await loadTokenCounter(
    { modelDir: config.EMBEDDING_MODEL_DIR, model: config.EMBEDDING_MODEL },
    (message) => logger.warn(message),
  );
  const extraction = new WorkerTextExtractor({
    limits: extractionLimitsOf(config),
    workers: config.PARSER_WORKERS,
    maxMemoryMb: config.PARSER_WORKER_MAX_MEMORY_MB,
    timeoutMs: config.PARSER_TIMEOUT_MS,
    log: (message) => logger.warn(message),
  });
  const ocr = new OcrPool({
    workers: config.OCR_WORKERS,
    maxMemoryMb: config.OCR_WORKER_MAX_MEMORY_MB,
    pageTimeoutMs: config.OCR_PAGE_TIMEOUT_MS,
    log: (message) => logger.warn(message),
  });
  const extractor = new OcrTextExtractor(extraction, ocr, {
    defaultLanguages: config.OCR_LANGUAGES,
    minConfidence: config.OCR_MIN_CONFIDENCE,
    maxTextChars: config.PARSER_MAX_TEXT_CHARS,
    log: (message) => logger.warn(message),
  });
  // A worker that cannot load would fail every document `too_large`: fail the boot instead.
  await extraction.extract({
    filename: 'boot.txt',
    contentType: 'text/plain',
    body: Buffer.from('ok'),
  });
  const kafka = kafkaFromConfig(config, 'parser-service');
  const producer = new KafkaEventProducer(kafka);
  await producer.connect();
  const blobs = s3BlobStoreFromEnv(config);
  await blobs.ensureBucket();
  await bootHttpService({
    module: AppModule.register({
      config,
      kafka,
      producer,
      blobs,
      tokens,
      extractor,
      pools: [extraction, ocr],
    }),
    logger,
    host: config.HOST,
    port: config.PORT,
    name: 'parser-service',
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
