export * from './from-env';
export { vectorMigrationPlan, vectorTable, vectorTableMigrations } from './migrations';
export * from './pgvector-store';
export * from './pinecone-store';
export * from './vector-store';
