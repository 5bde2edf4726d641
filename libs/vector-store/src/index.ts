export * from './from-env';
export { vectorMigrationPlan, vectorTable, vectorTableMigrations } from './migrations';
export * from './pgvector-store';
export * from './pinecone-lexical-index';
export * from './pinecone-store';
export { capSparse, MAX_SPARSE_NON_ZEROS, MAX_SPARSE_TOP_K } from './sparse-limits';
export * from './vector-store';
