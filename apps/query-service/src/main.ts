import './telemetry';
import 'reflect-metadata';

import { tokenVerifierFrom } from '@kb/auth';
import { tenantOfSpace } from '@kb/contracts';
import { extraEmbeddingProviders, queryEmbeddingProviderFromConfig } from '@kb/embeddings';
import { GrpcTransport } from '@kb/grpc';
import { bootHttpService, FlexibleRateLimiter } from '@kb/http';
import {
  CoalescingGenerationReads,
  PgDocumentIndexState,
  PgIndexGenerations,
} from '@kb/index-state';
import { KafkaEventProducer, kafkaFromConfig } from '@kb/kafka';
import {
  FEEDBACK_CAP,
  type LexicalIndex,
  lexicalMemoryLimits,
  PgLexicalIndex,
  processMemoryBytes,
  referenceEncoder,
  SnapshotLexicalIndex,
} from '@kb/lexical-index';
import { annotateActiveSpan, createLogger, meter } from '@kb/observability';
import { pineconeLexicalIndexFromEnv, vectorStoreFromEnv } from '@kb/vector-store';
import type { LoggerService } from '@nestjs/common';

import { AppModule } from './app.module';
import { RedisSearchCache } from './cache/search.cache';
import { loadQueryConfig, type QueryConfig } from './config/query.config';
import { crossEncoderFromConfig, CrossEncoderLoadError } from './search/cross-encoder.reranker';

async function main(): Promise<void> {
  const config = loadQueryConfig();
  const logger = createLogger('query-service', config.LOG_LEVEL);
  // First: a configured cross-encoder that cannot be loaded stops the boot here, with its reason.
  const reranker = await crossEncoderFromConfig(config);
  logger.log(
    reranker
      ? `cross-encoder ${reranker.model} loaded (${reranker.msPerPair.toFixed(1)} ms a pair)`
      : 'no cross-encoder (RERANKER_MODEL unset or none)',
    'Bootstrap',
  );
  // The same provider and model as embedding-service: queries and chunks share one vector space.
  // Each query in a model run of its own, so its vector depends on its text only.
  const provider = await queryEmbeddingProviderFromConfig(config);
  // query-service only reads: indexing-service (or the Helm hook) migrates the vector tables.
  const vectors = vectorStoreFromEnv(config, { migrate: false });
  // Start even when the vector store is down: searches then degrade to BM25 results.
  await vectors.ensureReady(provider.dimension).catch((error: unknown) => {
    logger.warn(
      `vector store not ready at boot, searches will be degraded: ${String(error)}`,
      'Bootstrap',
    );
  });
  const generations = new PgIndexGenerations({ url: config.DATABASE_URL });
  const lexical = lexicalIndex(config, generations, logger);
  const indexState = new PgDocumentIndexState({ url: config.DATABASE_URL });
  const cache = config.REDIS_URL
    ? RedisSearchCache.connect(
        { ...config, REDIS_URL: config.REDIS_URL },
        config.SEARCH_CACHE_TTL_SECONDS,
      )
    : null;
  const verifier = tokenVerifierFrom(config);
  const kafka = kafkaFromConfig(config, 'query-service');
  const producer = new KafkaEventProducer(kafka);
  await producer.connect();
  await bootHttpService({
    module: AppModule.register({
      config,
      provider,
      vectors,
      lexical,
      generations,
      indexState,
      cache,
      reranker,
      extraProviders: await extraEmbeddingProviders(
        config.EMBEDDING_EXTRA_MODELS,
        provider.dimension,
        config,
      ),
      kafka,
      producer,
      verifier,
      rateLimiter: FlexibleRateLimiter.fromConfig(config),
    }),
    auth: verifier,
    transports: [(app) => app.get(GrpcTransport).connect(app)],
    logger,
    host: config.HOST,
    port: config.PORT,
    name: 'query-service',
  });
}

/**
 * The lexical index searches read: with VECTOR_STORE=pinecone, Pinecone's sparse index (the chunk
 * rows stay in Postgres, docs/adr/0057); otherwise BM25 in memory over a snapshot of each space,
 * kept while the tenant's index generation holds (docs/adr/0029), unless LEXICAL_MEMORY_CHUNKS is
 * 0; its statistics by LEXICAL_IDF (docs/adr/0056).
 */
function lexicalIndex(
  config: QueryConfig,
  generations: PgIndexGenerations,
  logger: Pick<LoggerService, 'warn' | 'log'>,
): LexicalIndex {
  const postgres = new PgLexicalIndex({ url: config.DATABASE_URL });
  const pinecone = pineconeLexicalIndexFromEnv(config, postgres);
  if (pinecone) return pinecone;
  const auto = lexicalMemoryLimits(processMemoryBytes());
  const maxChunks =
    config.LEXICAL_MEMORY_CHUNKS === 'auto' ? auto.chunks : config.LEXICAL_MEMORY_CHUNKS;
  const maxPostings =
    config.LEXICAL_MEMORY_POSTINGS === 'auto' ? auto.postings : config.LEXICAL_MEMORY_POSTINGS;
  if (maxChunks === 0) return postgres;
  logger.log(`BM25 in memory: up to ${maxChunks} chunks, ${maxPostings} postings`, 'LexicalIndex');
  const reads = new CoalescingGenerationReads(generations);
  const searches = meter().createCounter('kb_lexical_searches_total', {
    description: 'BM25 searches by where they ran: memory (a current snapshot) or index (Postgres)',
  });
  const carryFailures = meter().createCounter('kb_lexical_carry_failures_total', {
    description:
      "Snapshots that read their posting lists cold: the new chunks' postings could not be read",
  });
  const builds = meter().createHistogram('kb_lexical_snapshot_build_ms', {
    description: "Time to read a space's chunks and build its in-memory BM25 snapshot",
    unit: 'ms',
  });
  return new SnapshotLexicalIndex(postgres, {
    generation: (space) => reads.current(tenantOfSpace(space)),
    maxChunks,
    reference: config.LEXICAL_IDF === 'readable' ? undefined : referenceEncoder().reference,
    tenantWide: config.LEXICAL_IDF === 'tenant',
    feedbackCap: config.LEXICAL_FEEDBACK_CAP ? FEEDBACK_CAP : null,
    windowedFrom: config.LEXICAL_WINDOWED_FROM,
    maxPostings,
    onBuilt: (space, chunks, ms) => {
      builds.record(ms);
      logger.log(
        `lexical snapshot of ${space}: ${chunks} chunks in ${Math.round(ms)} ms`,
        'LexicalIndex',
      );
    },
    onBuildFailed: (space, error) =>
      logger.warn(
        `lexical snapshot of ${space} not built, BM25 in Postgres: ${String(error)}`,
        'LexicalIndex',
      ),
    onCarryFailed: (space, error) => {
      carryFailures.add(1);
      logger.warn(
        `lexical snapshot of ${space}: the last one's lists not carried over, read cold: ${String(error)}`,
        'LexicalIndex',
      );
    },
    onSearch: (path) => {
      annotateActiveSpan({ 'kb.lexical': path });
      searches.add(1, { path });
    },
  });
}

main().catch((error: unknown) => {
  // A configuration fault is told in one line; anything else with its stack.
  console.error(error instanceof CrossEncoderLoadError ? `query-service: ${error.message}` : error);
  process.exit(1);
});
