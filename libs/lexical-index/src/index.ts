export * from './lexical-index';
export { LEXICAL_SCHEMA, lexicalIndexMigrations } from './migrations';
export * from './pg-lexical-index';
