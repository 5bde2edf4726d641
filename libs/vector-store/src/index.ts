export * from './vector-store';
export * from './pgvector-store';
export * from './pinecone-store';
export * from './from-env';
export { vectorMigrationPlan, vectorTable, vectorTableMigrations } from './migrations';
