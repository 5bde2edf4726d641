import { Topics, toTenantId } from '@kb/contracts';
import { EventConsumer } from '@kb/kafka';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { KAFKA } from '../platform/tokens';
import { DocumentsService } from './documents.service';

/** Listens to pipeline status events and records them on the document. */
@Injectable()
export class StatusConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(StatusConsumer.name);
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(DOCUMENT_CONFIG) config: DocumentConfig,
    private readonly documents: DocumentsService,
  ) {
    this.consumer = new EventConsumer(kafka, {
      groupId: config.KAFKA_GROUP_ID,
      handlers: {
        [Topics.documentStatus]: (event) =>
          this.documents.applyStatus(
            toTenantId(event.tenantId),
            event.payload,
            new Date(event.occurredAt),
          ),
      },
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
