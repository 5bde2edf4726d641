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
import { INDEXING_CONFIG, type IndexingConfig } from '../config/indexing.config';
import { EVENT_PRODUCER, KAFKA } from '../platform/tokens';
import { IndexingService } from './indexing.service';

/** Thin Kafka adapter: `chunks embedded` events in, one service call each. */
@Injectable()
export class EmbeddedConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(EmbeddedConsumer.name);
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(EVENT_PRODUCER) producer: EventProducer,
    @Inject(INDEXING_CONFIG) config: IndexingConfig,
    indexing: IndexingService,
  ) {
    this.consumer = new EventConsumer(kafka, {
      groupId: config.KAFKA_GROUP_ID,
      handlers: {
        [Topics.chunksEmbedded]: (event) => indexing.indexDocument(event.tenantId, event.payload),
      },
      onDeadLetter: markFailedOnDeadLetter(producer, 'indexing_error'),
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
