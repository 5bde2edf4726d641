import { AccessResolver, ResolverAccessPolicy, type TokenVerifier } from '@kb/auth';
import { migrationsReadinessCheck } from '@kb/database';
import {
  ACCESS_POLICY,
  type Closer,
  CLOSERS,
  type FlexibleRateLimiter,
  HealthController,
  MetricsController,
  RATE_LIMITER,
  Readiness,
  READINESS_CHECKS,
  ResourceCloser,
} from '@kb/http';
import { EVENT_CONSUMERS, EventConsumersHost } from '@kb/kafka';
import { type DynamicModule, Module } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import { type Kysely, sql } from 'kysely';

import { WEBHOOK_CONFIG, type WebhookConfig } from './config/webhook.config';
import { DeliveriesRepository } from './deliveries/deliveries.repository';
import { DeliveryDispatcher } from './deliveries/delivery.dispatcher';
import { DeliveryRetention } from './deliveries/delivery.retention';
import type { ReceiverSender } from './deliveries/receiver.sender';
import { WebhookEventsConsumer } from './deliveries/webhook-events.consumer';
import { migrationPlans } from './migrations';
import { OpenApiController } from './openapi.controller';
import type { DB } from './platform/db.generated';
import {
  CLOCK,
  KAFKA,
  RECEIVER_SENDER,
  SECRET_BOX,
  TOKEN_VERIFIER,
  WEBHOOK_DB,
} from './platform/tokens';
import { WebhookSecretSealer } from './webhooks/secret.sealer';
import { SecretBox } from './webhooks/secret-box';
import { WebhooksController } from './webhooks/webhooks.controller';
import { WebhooksRepository } from './webhooks/webhooks.repository';
import { WebhooksService } from './webhooks/webhooks.service';

export interface WebhookDeps {
  config: WebhookConfig;
  kafka: Kafka;
  db: Kysely<DB>;
  verifier: TokenVerifier;
  /** How deliveries reach receivers (node's HTTP client guarded against private addresses). */
  sender: ReceiverSender;
  rateLimiter: FlexibleRateLimiter;
  closers: Closer[];
}

@Module({})
export class AppModule {
  static register(deps: WebhookDeps): DynamicModule {
    const { config } = deps;
    return {
      module: AppModule,
      controllers: [WebhooksController, HealthController, MetricsController, OpenApiController],
      providers: [
        { provide: WEBHOOK_CONFIG, useValue: config },
        { provide: WEBHOOK_DB, useValue: deps.db },
        { provide: KAFKA, useValue: deps.kafka },
        { provide: TOKEN_VERIFIER, useValue: deps.verifier },
        { provide: RECEIVER_SENDER, useValue: deps.sender },
        { provide: CLOCK, useValue: () => new Date() },
        {
          provide: SECRET_BOX,
          useValue: new SecretBox(config.WEBHOOK_SECRET_KEY, config.WEBHOOK_SECRET_PREVIOUS_KEYS),
        },
        { provide: CLOSERS, useValue: [...deps.closers, () => deps.rateLimiter.close()] },
        { provide: RATE_LIMITER, useValue: deps.rateLimiter },
        ResourceCloser,
        {
          provide: AccessResolver,
          useFactory: () =>
            new AccessResolver({
              address: config.ACL_GRPC_ADDRESS,
              ttlMs: config.AUTHZ_CACHE_TTL_MS,
            }),
        },
        {
          provide: ACCESS_POLICY,
          inject: [AccessResolver],
          useFactory: (resolver: AccessResolver) => new ResolverAccessPolicy(resolver),
        },
        WebhooksRepository,
        DeliveriesRepository,
        WebhooksService,
        DeliveryDispatcher,
        DeliveryRetention,
        WebhookSecretSealer,
        WebhookEventsConsumer,
        {
          provide: EVENT_CONSUMERS,
          inject: [WebhookEventsConsumer],
          useFactory: ({ consumer }: WebhookEventsConsumer) => [consumer],
        },
        EventConsumersHost,
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [EventConsumersHost],
          useFactory: (consumers: EventConsumersHost) => [
            // Not ready while the Helm hook (or a newer replica) has migrations left to apply.
            migrationsReadinessCheck(migrationPlans(config)),
            { name: 'postgres', check: async () => (await sql`select 1`.execute(deps.db), true) },
            consumers.readinessCheck(),
          ],
        },
      ],
    };
  }
}
