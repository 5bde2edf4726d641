import {
  type Closer,
  CLOSERS,
  HealthController,
  MetricsController,
  Readiness,
  READINESS_CHECKS,
  ResourceCloser,
} from '@kb/http';
import { EVENT_CONSUMERS, EventConsumersHost, type EventProducer } from '@kb/kafka';
import type { S3BlobStore } from '@kb/storage';
import { type DynamicModule, Module } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import type { TokenCounter } from './chunking/token.counter';
import { PARSER_CONFIG, type ParserConfig } from './config/parser.config';
import { DocumentsConsumer } from './parsing/documents.consumer';
import type { TextExtractor } from './parsing/extraction.model';
import { ParsingService } from './parsing/parsing.service';
import {
  BLOB_STORE,
  EVENT_PRODUCER,
  KAFKA,
  TEXT_EXTRACTOR,
  TOKEN_COUNTER,
} from './platform/tokens';

export interface ParserDeps {
  config: ParserConfig;
  kafka: Kafka;
  producer: EventProducer;
  blobs: S3BlobStore;
  /** The embedding model's tokenizer (or the word estimate without the model folder). */
  tokens: TokenCounter;
  /** Text extraction in worker threads, bounded in memory and time (docs/adr/0016), then OCR. */
  extractor: TextExtractor;
  /** The thread pools behind it (extraction, OCR), stopped at shutdown. */
  pools: Array<{ close(): Promise<void> }>;
}

@Module({})
export class AppModule {
  static register(deps: ParserDeps): DynamicModule {
    const closers: Closer[] = [
      () => deps.producer.disconnect(),
      () => deps.blobs.destroy(),
      ...deps.pools.map((pool) => () => pool.close()),
    ];
    return {
      module: AppModule,
      controllers: [HealthController, MetricsController],
      providers: [
        { provide: PARSER_CONFIG, useValue: deps.config },
        { provide: KAFKA, useValue: deps.kafka },
        { provide: EVENT_PRODUCER, useValue: deps.producer },
        { provide: BLOB_STORE, useValue: deps.blobs },
        { provide: TOKEN_COUNTER, useValue: deps.tokens },
        { provide: TEXT_EXTRACTOR, useValue: deps.extractor },
        { provide: CLOSERS, useValue: closers },
        ResourceCloser,
        ParsingService,
        DocumentsConsumer,
        {
          provide: EVENT_CONSUMERS,
          inject: [DocumentsConsumer],
          useFactory: (documents: DocumentsConsumer) => [documents.consumer],
        },
        EventConsumersHost,
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [EventConsumersHost],
          useFactory: (consumers: EventConsumersHost) => [
            consumers.readinessCheck(),
            { name: 's3', check: async () => (await deps.blobs.ping(), true) },
          ],
        },
      ],
    };
  }
}
