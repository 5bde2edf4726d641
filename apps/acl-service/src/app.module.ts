import type { TokenVerifier } from '@kb/auth';
import { aclv1 } from '@kb/contracts';
import { migrationsReadinessCheck } from '@kb/database';
import { GrpcTransport } from '@kb/grpc';
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
import {
  EVENT_CONSUMERS,
  type EventConsumer,
  EventConsumersHost,
  type EventProducer,
} from '@kb/kafka';
import { type DynamicModule, Module } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import { type Kysely, sql } from 'kysely';

import { AccessGrpcController } from './access/access.grpc';
import { AclAccessPolicy } from './access/acl-access.policy';
import { AdminController } from './admin/admin.controller';
import { AuditConsumer } from './audit/audit.consumer';
import { AuditController } from './audit/audit.controller';
import { AuditRepository } from './audit/audit.repository';
import { ACL_CONFIG, type AclConfig } from './config/acl.config';
import { DocumentGrantsConsumer } from './grants/document-grants.consumer';
import { GrantEndsRepository } from './grants/grant-ends.repository';
import { GrantExpiryTask } from './grants/grant-expiry.task';
import { migrationPlans } from './migrations';
import { OpenApiController } from './openapi.controller';
import type { DB } from './platform/db.generated';
import { ACL_DB, ENFORCER, EVENT_PRODUCER, KAFKA, TOKEN_VERIFIER } from './platform/tokens';
import { PolicyConsumer } from './policy/policy.consumer';
import { type EnforcerSource, PolicyService } from './policy/policy.service';
import { PolicyVersionsRepository } from './policy/policy-versions.repository';

export interface AclDeps {
  config: AclConfig;
  kafka: Kafka;
  producer: EventProducer;
  enforcer: EnforcerSource;
  db: Kysely<DB>;
  verifier: TokenVerifier;
  /** Administration budgets (@Authenticated({ rateLimit: 'admin' })); closed with the rest. */
  rateLimiter: FlexibleRateLimiter;
  closers: Closer[];
}

@Module({})
export class AppModule {
  static register(deps: AclDeps): DynamicModule {
    return {
      module: AppModule,
      controllers: [
        AdminController,
        AuditController,
        AccessGrpcController,
        HealthController,
        MetricsController,
        OpenApiController,
      ],
      providers: [
        { provide: ACL_CONFIG, useValue: deps.config },
        { provide: ENFORCER, useValue: deps.enforcer },
        { provide: ACL_DB, useValue: deps.db },
        { provide: EVENT_PRODUCER, useValue: deps.producer },
        { provide: TOKEN_VERIFIER, useValue: deps.verifier },
        { provide: KAFKA, useValue: deps.kafka },
        { provide: CLOSERS, useValue: [...deps.closers, () => deps.rateLimiter.close()] },
        { provide: RATE_LIMITER, useValue: deps.rateLimiter },
        ResourceCloser,
        AuditRepository,
        PolicyVersionsRepository,
        PolicyService,
        GrantEndsRepository,
        GrantExpiryTask,
        { provide: ACCESS_POLICY, useClass: AclAccessPolicy },
        {
          provide: GrpcTransport,
          useValue: new GrpcTransport({
            host: deps.config.GRPC_HOST,
            port: deps.config.GRPC_PORT,
            services: { 'kb.v1.AccessControl': aclv1.AccessControlService },
          }),
        },
        AuditConsumer,
        PolicyConsumer,
        DocumentGrantsConsumer,
        {
          provide: EVENT_CONSUMERS,
          inject: [AuditConsumer, PolicyConsumer, DocumentGrantsConsumer],
          useFactory: (...consumers: Array<{ consumer: EventConsumer }>) =>
            consumers.map(({ consumer }) => consumer),
        },
        EventConsumersHost,
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [EventConsumersHost],
          useFactory: (consumers: EventConsumersHost) => [
            // Not ready while the Helm hook (or a newer replica) has migrations left to apply.
            migrationsReadinessCheck(migrationPlans(deps.config)),
            { name: 'postgres', check: async () => (await sql`select 1`.execute(deps.db), true) },
            consumers.readinessCheck(),
          ],
        },
      ],
    };
  }
}
