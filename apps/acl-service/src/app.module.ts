import type { TokenVerifier } from '@kb/auth';
import { Topics } from '@kb/contracts';
import {
  CLOSERS,
  HealthController,
  MetricsController,
  READINESS_CHECKS,
  Readiness,
  ResourceCloser,
  type Closer,
} from '@kb/http';
import {
  EVENT_CONSUMERS,
  EventConsumer,
  EventConsumersHost,
  consumerLog,
  instanceGroupId,
  type EventProducer,
} from '@kb/kafka';
import { Module, type DynamicModule } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import type { Kysely } from 'kysely';
import { AdminController } from './admin/admin.controller';
import { AuditRepository } from './audit/audit.repository';
import { ACL_CONFIG, type AclConfig } from './config/acl.config';
import { AccessControlGrpcServer } from './grpc/access-control.grpc';
import { ACL_DB, ENFORCER, EVENT_PRODUCER, TOKEN_VERIFIER } from './platform/tokens';
import { PolicyVersionsRepository } from './policy/policy-versions.repository';
import { PolicyService, type EnforcerSource } from './policy/policy.service';

export interface AclDeps {
  config: AclConfig;
  kafka: Kafka;
  producer: EventProducer;
  enforcer: EnforcerSource;
  db: Kysely<unknown>;
  verifier: TokenVerifier;
  closers: Closer[];
}

@Module({})
export class AppModule {
  static register(deps: AclDeps): DynamicModule {
    return {
      module: AppModule,
      controllers: [AdminController, HealthController, MetricsController],
      providers: [
        { provide: ACL_CONFIG, useValue: deps.config },
        { provide: ENFORCER, useValue: deps.enforcer },
        { provide: ACL_DB, useValue: deps.db },
        { provide: EVENT_PRODUCER, useValue: deps.producer },
        { provide: TOKEN_VERIFIER, useValue: deps.verifier },
        { provide: CLOSERS, useValue: deps.closers },
        ResourceCloser,
        AuditRepository,
        PolicyVersionsRepository,
        PolicyService,
        AccessControlGrpcServer,
        {
          provide: EVENT_CONSUMERS,
          inject: [AuditRepository, PolicyService],
          useFactory: (audit: AuditRepository, policy: PolicyService) => [
            // One group for the service: each audit record is stored once.
            new EventConsumer(deps.kafka, {
              groupId: `${deps.config.KAFKA_GROUP_ID}-audit`,
              handlers: { [Topics.audit]: (event) => audit.insert(event.tenantId, event.payload) },
              log: consumerLog('AuditConsumer'),
            }),
            // A group per instance: every replica reloads the policy another one changed.
            new EventConsumer(deps.kafka, {
              groupId: instanceGroupId(`${deps.config.KAFKA_GROUP_ID}-policy`),
              handlers: { [Topics.acl]: () => policy.reload() },
              fromBeginning: false,
              log: consumerLog('PolicyConsumer'),
            }),
          ],
        },
        EventConsumersHost,
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [EventConsumersHost],
          useFactory: (consumers: EventConsumersHost) => [
            { name: 'kafka-consumer', check: async () => consumers.allJoined },
          ],
        },
      ],
    };
  }
}
