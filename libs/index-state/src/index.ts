export * from './index-generations';
export * from './document-index-state';
export * from './pg-index-generations';
export * from './pg-document-index-state';
export { indexStateMigrations, INDEX_STATE_SCHEMA } from './migrations';
