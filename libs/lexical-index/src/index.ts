export * from './lexical-index';
export * from './pg-lexical-index';
export { lexicalIndexMigrations, LEXICAL_SCHEMA } from './migrations';
