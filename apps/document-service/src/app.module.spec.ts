import { tokenVerifierFrom } from '@kb/auth';
import { createDatabase, createPool } from '@kb/database';
import { ACCESS_POLICY, FlexibleRateLimiter, RATE_LIMITER, TOKEN_VERIFIER } from '@kb/http';
import { EVENT_CONSUMERS, type EventConsumer, kafkaFromConfig } from '@kb/kafka';
import { s3BlobStoreFromEnv } from '@kb/storage';
import { MemoryEventProducer, MemoryIndexGenerations } from '@kb/testing';
import { Test } from '@nestjs/testing';

import { AppModule } from './app.module';
import { documentConfigSchema } from './config/document.config';
import { DocumentContentService } from './document-content/document-content.service';
import { DocumentMembershipService } from './documents/document-membership.service';
import { DocumentsService } from './documents/documents.service';
import { KnowledgeBaseDirectoryService } from './knowledge-bases/knowledge-base-directory.service';
import { KnowledgeBasesService } from './knowledge-bases/knowledge-bases.service';
import { KnowledgeBaseDirectory } from './pipelines/knowledge-base-directory.port';
import { PIPELINE_DEFAULTS } from './pipelines/pipeline-defaults.provider';
import { TagRuleMembership } from './pipelines/tag-rule-membership.port';
import type { DocumentDatabase } from './platform/db.types';
import { Reconciler } from './reconciliation/reconciler.service';
import { DocumentStatsService } from './stats/document-stats.service';

/**
 * The module wires every provider from the adapters main.ts hands it. Nothing is connected: the
 * pool, the Kafka client and the S3 client connect on first use, and the producer is in memory.
 */
describe('AppModule', () => {
  it('resolves every service, the two ports between documents and knowledge bases, and the consumers', async () => {
    const config = documentConfigSchema.parse({
      DATABASE_URL: 'postgres://kb:kb@127.0.0.1:1/kb',
      KAFKA_BROKERS: '127.0.0.1:1',
      CHUNK_SIZE: '800',
      AUTH_JWT_SECRET: 'a-secret-for-unit-tests-only-0123456789',
    });
    const verifier = tokenVerifierFrom(config);
    const deps = {
      config,
      db: createDatabase<DocumentDatabase>(
        createPool({ url: config.DATABASE_URL, schema: config.DB_SCHEMA }),
      ),
      kafka: kafkaFromConfig(config, 'document-service'),
      producer: new MemoryEventProducer(),
      blobs: s3BlobStoreFromEnv(config),
      verifier,
      rateLimiter: FlexibleRateLimiter.fromConfig(config),
      generations: new MemoryIndexGenerations(),
    };
    const app = await Test.createTestingModule({
      imports: [AppModule.register(deps)],
    }).compile();

    expect(app.get(DocumentsService)).toBeInstanceOf(DocumentsService);
    expect(app.get(KnowledgeBasesService)).toBeInstanceOf(KnowledgeBasesService);
    expect(app.get(Reconciler)).toBeInstanceOf(Reconciler);
    expect(app.get(DocumentContentService)).toBeInstanceOf(DocumentContentService);
    expect(app.get(DocumentStatsService)).toBeInstanceOf(DocumentStatsService);
    expect(app.get(KnowledgeBaseDirectory)).toBeInstanceOf(KnowledgeBaseDirectoryService);
    expect(app.get(TagRuleMembership)).toBe(app.get(DocumentMembershipService));
    expect(app.get(PIPELINE_DEFAULTS)).toEqual({
      chunker: { strategy: 'recursive', size: 800, overlap: 150 },
      model: config.EMBEDDING_MODEL,
    });
    // Access invalidation, statuses, usage.
    expect(app.get<EventConsumer[]>(EVENT_CONSUMERS)).toHaveLength(3);
    // What @Authenticated({ access: true }) on the controllers needs.
    expect(app.get(TOKEN_VERIFIER)).toBe(verifier);
    expect(app.get(ACCESS_POLICY)).toBeDefined();
    expect(app.get(RATE_LIMITER)).toBe(deps.rateLimiter);
  });
});
