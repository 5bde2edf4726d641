import { Topics } from '@kb/contracts';
import { EventConsumer, markFailedOnDeadLetter, type EventProducer } from '@kb/kafka';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import { EMBEDDING_CONFIG, type EmbeddingServiceConfig } from '../config/embedding.config';
import { EVENT_PRODUCER, KAFKA } from '../platform/tokens';
import { EmbeddingService } from './embedding.service';

/** Thin Kafka adapter: `document parsed` events in, one service call each. */
@Injectable()
export class ParsedConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ParsedConsumer.name);
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(EVENT_PRODUCER) producer: EventProducer,
    @Inject(EMBEDDING_CONFIG) config: EmbeddingServiceConfig,
    embedding: EmbeddingService,
  ) {
    this.consumer = new EventConsumer(kafka, {
      groupId: config.KAFKA_GROUP_ID,
      handlers: {
        [Topics.documentParsed]: (event) => embedding.embedDocument(event.tenantId, event.payload),
      },
      onDeadLetter: markFailedOnDeadLetter(producer, 'embedding_error'),
      log: (message, context) => this.logger.warn({ message, ...context }),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.consumer.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }
}
