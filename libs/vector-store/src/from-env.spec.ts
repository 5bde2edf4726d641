import { PgLexicalIndex } from '@kb/lexical-index';

import { pineconeLexicalIndexFromEnv, vectorStoreFromEnv } from './from-env';
import { PineconeLexicalIndex } from './pinecone-lexical-index';
import { PineconeStore } from './pinecone-store';

describe('the stores from the shared settings', () => {
  // Never connects: a pool connects on first query, Pinecone on first request.
  const rows = new PgLexicalIndex({ url: 'postgres://kb:kb@127.0.0.1:1/none' });
  afterAll(() => rows.close());
  const pinecone = {
    VECTOR_STORE: 'pinecone' as const,
    PINECONE_API_KEY: 'key',
    PINECONE_INDEX_HOST: 'dense.example.com',
    PINECONE_SPARSE_INDEX_HOST: 'sparse.example.com',
  };

  it('with Pinecone, serves both halves from it: the dense store and the sparse lexical index', () => {
    expect(vectorStoreFromEnv(pinecone, { migrate: false })).toBeInstanceOf(PineconeStore);
    expect(pineconeLexicalIndexFromEnv(pinecone, rows)).toBeInstanceOf(PineconeLexicalIndex);
  });

  it('refuses Pinecone without the sparse index, in both services', () => {
    const half = { ...pinecone, PINECONE_SPARSE_INDEX_HOST: undefined };
    expect(() => vectorStoreFromEnv(half, { migrate: false })).toThrow(
      /PINECONE_SPARSE_INDEX_HOST/,
    );
    expect(() => pineconeLexicalIndexFromEnv(half, rows)).toThrow(/PINECONE_SPARSE_INDEX_HOST/);
  });

  it('with pgvector, leaves the lexical index in Postgres', () => {
    const pgvector = { VECTOR_STORE: 'pgvector' as const, VECTOR_DATABASE_URL: 'postgres://x/y' };
    expect(pineconeLexicalIndexFromEnv(pgvector, rows)).toBeUndefined();
  });
});
