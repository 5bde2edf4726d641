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
import { PARSER_CONFIG, type ParserConfig } from '../config/parser.config';
import { EVENT_PRODUCER, KAFKA } from '../platform/tokens';
import { ParsingService } from './parsing.service';

/** Thin Kafka adapter: validated document events in, one service call each. */
@Injectable()
export class DocumentsConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DocumentsConsumer.name);
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(EVENT_PRODUCER) producer: EventProducer,
    @Inject(PARSER_CONFIG) config: ParserConfig,
    parsing: ParsingService,
  ) {
    this.consumer = new EventConsumer(kafka, {
      groupId: config.KAFKA_GROUP_ID,
      handlers: { [Topics.document]: (event) => parsing.onDocumentEvent(event) },
      onDeadLetter: markFailedOnDeadLetter(producer, 'parse_error'),
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
