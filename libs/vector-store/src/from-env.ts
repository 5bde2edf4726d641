import { type LexicalIndex, referenceEncoder } from '@kb/lexical-index';

import { PgVectorStore } from './pgvector-store';
import { type LexicalMetadata, PineconeLexicalIndex } from './pinecone-lexical-index';
import { PineconeStore } from './pinecone-store';
import type { VectorStore } from './vector-store';

/** The shared settings of the vector store (see `vectorStoreConfigSchema` in @kb/config). */
export interface VectorStoreSettings {
  VECTOR_STORE: 'pgvector' | 'pinecone';
  VECTOR_DATABASE_URL?: string | undefined;
  PINECONE_API_KEY?: string | undefined;
  PINECONE_INDEX_HOST?: string | undefined;
  PINECONE_SPARSE_INDEX_HOST?: string | undefined;
}

/**
 * Picks the backend from the shared settings. `migrate`: whether pgvector's `ensureReady`
 * applies its table migrations or only checks them (see `PgVectorOptions`). With Pinecone, the
 * sparse index of the lexical half is required too (a service never runs half on Pinecone).
 */
export function vectorStoreFromEnv(
  config: VectorStoreSettings,
  options: { migrate: boolean },
): VectorStore {
  if (config.VECTOR_STORE === 'pinecone') {
    const { apiKey, indexHost } = pineconeSettings(config);
    return new PineconeStore({ apiKey, indexHost });
  }
  if (!config.VECTOR_DATABASE_URL) {
    throw new Error('VECTOR_STORE=pgvector needs VECTOR_DATABASE_URL');
  }
  return new PgVectorStore({ url: config.VECTOR_DATABASE_URL, migrate: options.migrate });
}

/**
 * With VECTOR_STORE=pinecone, the lexical index whose searches Pinecone's sparse index serves,
 * `metadata` (the Postgres lexical index) keeping the chunk rows (docs/adr/0057); undefined with
 * pgvector, where the lexical index stays in Postgres.
 */
export function pineconeLexicalIndexFromEnv(
  config: VectorStoreSettings,
  metadata: LexicalMetadata,
): LexicalIndex | undefined {
  if (config.VECTOR_STORE !== 'pinecone') return undefined;
  const { apiKey, sparseIndexHost } = pineconeSettings(config);
  return new PineconeLexicalIndex({
    apiKey,
    indexHost: sparseIndexHost,
    metadata,
    encoder: referenceEncoder(),
  });
}

function pineconeSettings(config: VectorStoreSettings) {
  const { PINECONE_API_KEY, PINECONE_INDEX_HOST, PINECONE_SPARSE_INDEX_HOST } = config;
  if (!PINECONE_API_KEY || !PINECONE_INDEX_HOST || !PINECONE_SPARSE_INDEX_HOST) {
    throw new Error(
      'VECTOR_STORE=pinecone needs PINECONE_API_KEY, PINECONE_INDEX_HOST and PINECONE_SPARSE_INDEX_HOST',
    );
  }
  return {
    apiKey: PINECONE_API_KEY,
    indexHost: PINECONE_INDEX_HOST,
    sparseIndexHost: PINECONE_SPARSE_INDEX_HOST,
  };
}
