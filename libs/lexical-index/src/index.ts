export { postingList } from './bm25-rank';
export { constraintToSql } from './lexical-constraint.sql';
export * from './lexical-index';
export * from './lexical-query.parser';
export { LEXICAL_SCHEMA, lexicalIndexMigrations } from './migrations';
export * from './pg-lexical-index';
export * from './snapshot-lexical-index';
export { type PostingList, SpaceSnapshot } from './space-snapshot';
export type { SparseEncoder, SparseValues } from './sparse/sparse-encoder';
