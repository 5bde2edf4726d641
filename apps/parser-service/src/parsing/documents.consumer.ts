import { Topics } from '@kb/contracts';
import { consumerLog, EventConsumer, type EventProducer, markFailedOnDeadLetter } from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { PARSER_CONFIG, type ParserConfig } from '../config/parser.config';
import { EVENT_PRODUCER, KAFKA } from '../platform/tokens';
import { ParsingService } from './parsing.service';

/**
 * Kafka in: validated `kb.document.v1` events, one service call each. A document whose event is
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
    this.consumer = new EventConsumer(kafka, {
      groupId: config.KAFKA_GROUP_ID,
      handlers: { [Topics.document]: (event) => parsing.onDocumentEvent(event) },
      onDeadLetter: markFailedOnDeadLetter(producer, 'parse_error'),
      log: consumerLog(DocumentsConsumer.name),
    });
  }
}
