import { PgVectorStore } from './pgvector-store';
import { PineconeStore } from './pinecone-store';
import type { VectorStore } from './vector-store';

/**
 * Picks the backend from the shared settings (see `vectorStoreConfigSchema` in @kb/config).
 * `migrate`: whether pgvector's `ensureReady` applies its table migrations or only checks them
 * (see `PgVectorOptions`).
 */
export function vectorStoreFromEnv(
  config: {
    VECTOR_STORE: 'pgvector' | 'pinecone';
    VECTOR_DATABASE_URL?: string | undefined;
    PINECONE_API_KEY?: string | undefined;
    PINECONE_INDEX_HOST?: string | undefined;
  },
  options: { migrate: boolean },
): VectorStore {
  if (config.VECTOR_STORE === 'pinecone') {
    if (!config.PINECONE_API_KEY || !config.PINECONE_INDEX_HOST) {
      throw new Error('VECTOR_STORE=pinecone needs PINECONE_API_KEY and PINECONE_INDEX_HOST');
    }
    return new PineconeStore({
      apiKey: config.PINECONE_API_KEY,
      indexHost: config.PINECONE_INDEX_HOST,
    });
  }
  if (!config.VECTOR_DATABASE_URL) {
    throw new Error('VECTOR_STORE=pgvector needs VECTOR_DATABASE_URL');
  }
  return new PgVectorStore({ url: config.VECTOR_DATABASE_URL, migrate: options.migrate });
}
