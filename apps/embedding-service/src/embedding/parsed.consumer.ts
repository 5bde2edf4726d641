import { Topics } from '@kb/contracts';
import { consumerLog, EventConsumer, type EventProducer, markFailedOnDeadLetter } from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { EMBEDDING_CONFIG, type EmbeddingServiceConfig } from '../config/embedding.config';
import { EVENT_PRODUCER, KAFKA } from '../platform/tokens';
import { EmbeddingService } from './embedding.service';

/**
 * Kafka in: validated `kb.document.parsed.v1` events, one service call each. A document whose
 * event is dead-lettered is marked failed (`embedding_error` unless the error names a known reason).
 */
@Injectable()
export class ParsedConsumer {
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(EMBEDDING_CONFIG) config: EmbeddingServiceConfig,
    @Inject(EVENT_PRODUCER) producer: EventProducer,
    embedding: EmbeddingService,
  ) {
    this.consumer = new EventConsumer(kafka, {
      groupId: config.KAFKA_GROUP_ID,
      handlers: {
        [Topics.documentParsed]: (event) => embedding.embedDocument(event.tenantId, event.payload),
      },
      onDeadLetter: markFailedOnDeadLetter(producer, 'embedding_error'),
      log: consumerLog(ParsedConsumer.name),
    });
  }
}
