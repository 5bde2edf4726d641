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

import { PARSER_CONFIG, type ParserConfig } from '../config/parser.config';
import { EVENT_PRODUCER, KAFKA } from '../platform/tokens';
import { ParsingService } from './parsing.service';

/**
 * Uploads of a partition's fetched batch parsed at once, weighed by size: up to 8 small documents,
 * or one MiB of originals per unit, so their S3 and Kafka round trips overlap without holding
 * many large originals in memory together (docs/adr/0029, Ingest).
 */
export const PARSING_BUDGET = 8;
const MIB = 1024 * 1024;

/**
 * Kafka in: validated `kb.document.v1` events, one service call each; a partition's fetched batch
 * is handled concurrently, one document's events in order. A document whose event is
 * dead-lettered is marked failed (`parse_error` unless the error names a known reason).
 */
@Injectable()
export class DocumentsConsumer {
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(PARSER_CONFIG) config: ParserConfig,
    @Inject(EVENT_PRODUCER) producer: EventProducer,
    parsing: ParsingService,
  ) {
    const parse = (event: TopicEnvelope<typeof Topics.document>) => parsing.onDocumentEvent(event);
    this.consumer = new EventConsumer(kafka, {
      groupId: config.KAFKA_GROUP_ID,
      handlers: { [Topics.document]: parse },
      batchHandlers: {
        [Topics.document]: concurrentBatchHandler(parse, {
          keyOf: ({ tenantId, payload }) =>
            `${tenantId}/${'documentId' in payload ? payload.documentId : ''}`,
          weightOf: ({ payload }) =>
            payload.kind === 'uploaded' ? Math.ceil(payload.sizeBytes / MIB) : 1,
          budget: PARSING_BUDGET,
        }),
      },
      onDeadLetter: markFailedOnDeadLetter(producer, 'parse_error'),
      log: consumerLog(DocumentsConsumer.name),
    });
  }
}
