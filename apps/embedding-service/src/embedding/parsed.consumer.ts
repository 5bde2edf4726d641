import { type TopicEnvelope, Topics } from '@kb/contracts';
import {
  concurrentBatchHandler,
  consumerLog,
  EventConsumer,
  type EventProducer,
  markFailedOnDeadLetter,
} from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { EMBEDDING_CONFIG, type EmbeddingServiceConfig } from '../config/embedding.config';
import { EVENT_PRODUCER, KAFKA } from '../platform/tokens';
import { EmbeddingService } from './embedding.service';

/**
 * Chunks of a partition's fetched batch in flight at once: enough to keep the model's runs busy
 * (and its batches full, when `EMBEDDING_MAX_BATCH` allows more than one text a run) from several
 * documents while others are read or written.
 */
export const EMBEDDING_CHUNKS_IN_FLIGHT = 64;

/**
 * Kafka in: validated `kb.document.parsed.v1` events, one service call each; a partition's fetched
 * batch is handled concurrently, documents overlapping up to `EMBEDDING_CHUNKS_IN_FLIGHT` chunks
 * (docs/adr/0029, Ingest), so their chunks share model runs and their S3 and Kafka round trips
 * overlap. A document whose event is dead-lettered is marked failed (`embedding_error` unless the
 * error names a known reason).
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
    const embed = (event: TopicEnvelope<typeof Topics.documentParsed>) =>
      embedding.embedDocument(event.tenantId, event.payload);
    this.consumer = new EventConsumer(kafka, {
      groupId: config.KAFKA_GROUP_ID,
      handlers: { [Topics.documentParsed]: embed },
      batchHandlers: {
        [Topics.documentParsed]: concurrentBatchHandler(embed, {
          keyOf: (event) => `${event.tenantId}/${event.payload.documentId}`,
          weightOf: (event) => event.payload.chunkCount,
          budget: EMBEDDING_CHUNKS_IN_FLIGHT,
        }),
      },
      onDeadLetter: markFailedOnDeadLetter(producer, 'embedding_error'),
      log: consumerLog(ParsedConsumer.name),
    });
  }
}
