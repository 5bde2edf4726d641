import { EventProducer } from '@kb/kafka';
import {
  CLOSERS,
  HealthController,
  READINESS_CHECKS,
  Readiness,
  ResourceCloser,
  type Closer,
} from '@kb/http';
import type { S3BlobStore } from '@kb/storage';
import { Module, type DynamicModule } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import { PARSER_CONFIG, type ParserConfig } from './config/parser.config';
import { DocumentsConsumer } from './parsing/documents.consumer';
import { ParsingService } from './parsing/parsing.service';
import { BLOB_STORE, EVENT_PRODUCER, KAFKA } from './platform/tokens';

export interface ParserDeps {
  config: ParserConfig;
  kafka: Kafka;
  producer: EventProducer;
  blobs: S3BlobStore;
}

@Module({})
export class AppModule {
  static register(deps: ParserDeps): DynamicModule {
    const closers: Closer[] = [() => deps.producer.disconnect(), () => deps.blobs.destroy()];
    return {
      module: AppModule,
      controllers: [HealthController],
      providers: [
        { provide: PARSER_CONFIG, useValue: deps.config },
        { provide: KAFKA, useValue: deps.kafka },
        { provide: EVENT_PRODUCER, useValue: deps.producer },
        { provide: BLOB_STORE, useValue: deps.blobs },
        { provide: CLOSERS, useValue: closers },
        ResourceCloser,
        ParsingService,
        DocumentsConsumer,
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [DocumentsConsumer],
          useFactory: (documents: DocumentsConsumer) => [
            { name: 'kafka-consumer', check: async () => documents.consumer.isJoined },
          ],
        },
      ],
    };
  }
}
