import { AccessResolver, ResolverAccessPolicy, type TokenVerifier } from '@kb/auth';
import { ACCESS_POLICY, type FlexibleRateLimiter, RATE_LIMITER, TOKEN_VERIFIER } from '@kb/http';
import type { IndexGenerations } from '@kb/index-state';
import type { EventProducer } from '@kb/kafka';
import type { S3BlobStore } from '@kb/storage';
import { type DynamicModule, Global, Module, type Provider } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import type { Kysely } from 'kysely';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { OutboxRelay } from '../outbox/outbox.relay';
import { OutboxRepository, SqlOutboxRepository } from '../outbox/outbox.repository';
import { OutboxWriter } from '../outbox/outbox.writer';
import { pipelineDefaultsProvider } from '../pipelines/pipeline-defaults.provider';
import type { DocumentDatabase } from './db.types';
import { BLOB_STORE, CLOCK, DB, EVENT_PRODUCER, GENERATIONS, KAFKA } from './tokens';
import { SqlTransactionRunner, TransactionRunner } from './transaction.runner';

/** The adapters main.ts builds (and connects) from validated config; closed at shutdown. */
export interface DocumentDeps {
  config: DocumentConfig;
  db: Kysely<DocumentDatabase>;
  kafka: Kafka;
  producer: EventProducer;
  blobs: S3BlobStore;
  verifier: TokenVerifier;
  /** Bumped when documents are deleted in bulk, so no cached search result shows them. */
  generations: Pick<IndexGenerations, 'bump'> & { close?: () => Promise<void> };
  /** Upload and knowledge-base budgets (@Authenticated({ rateLimit })). */
  rateLimiter: FlexibleRateLimiter;
}

/**
 * The deps bag as providers, with what every feature writes through (transactions, the outbox)
 * and what `@Authenticated` needs. Global, so the feature modules inject them without importing
 * the root module.
 */
@Global()
@Module({})
export class PlatformModule {
  static register(deps: DocumentDeps): DynamicModule {
    const { config } = deps;
    const providers: Provider[] = [
      { provide: DOCUMENT_CONFIG, useValue: config },
      { provide: DB, useValue: deps.db },
      { provide: KAFKA, useValue: deps.kafka },
      { provide: EVENT_PRODUCER, useValue: deps.producer },
      { provide: BLOB_STORE, useValue: deps.blobs },
      { provide: CLOCK, useValue: () => new Date() },
      { provide: GENERATIONS, useValue: deps.generations },
      { provide: RATE_LIMITER, useValue: deps.rateLimiter },
      { provide: TOKEN_VERIFIER, useValue: deps.verifier },
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
      pipelineDefaultsProvider,
      { provide: TransactionRunner, useClass: SqlTransactionRunner },
      { provide: OutboxRepository, useClass: SqlOutboxRepository },
      OutboxWriter,
      OutboxRelay,
    ];
    return { module: PlatformModule, providers, exports: providers };
  }
}
