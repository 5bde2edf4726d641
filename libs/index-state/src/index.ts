export * from './coalescing-generation-reads';
export * from './document-index-state';
export * from './index-generations';
export { INDEX_STATE_SCHEMA, indexStateMigrations } from './migrations';
export * from './mirrored-index-generations';
export * from './pg-document-index-state';
export * from './pg-index-generations';
export * from './settling-index-generations';
