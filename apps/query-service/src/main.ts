import 'reflect-metadata';
import { OnnxEmbeddingProvider } from '@kb/embeddings';
import { bootHttpService } from '@kb/http';
import { PgLexicalIndex } from '@kb/lexical-index';
import { createLogger } from '@kb/observability';
import { vectorStoreFromEnv } from '@kb/vector-store';
import { AppModule } from './app.module';
import { loadQueryConfig } from './config/query.config';

async function main(): Promise<void> {
  const config = loadQueryConfig();
  const logger = createLogger('query-service', config.LOG_LEVEL);
  const provider = await OnnxEmbeddingProvider.load({
    modelDir: config.EMBEDDING_MODEL_DIR,
    model: config.EMBEDDING_MODEL,
    pooling: config.EMBEDDING_POOLING,
    threads: config.EMBEDDING_THREADS,
  });
  const vectors = vectorStoreFromEnv(config);
  await vectors.ensureReady(provider.dimension);
  const lexical = new PgLexicalIndex({ url: config.DATABASE_URL });
  await bootHttpService({
    module: AppModule.register({ config, provider, vectors, lexical }),
    logger,
    host: config.HOST,
    port: config.PORT,
    name: 'query-service',
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
