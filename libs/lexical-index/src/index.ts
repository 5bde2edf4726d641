export {
  blendedIdf,
  capFeedback,
  EVERYONE,
  FEEDBACK_CAP,
  type FeedbackCap,
  postingList,
  PRIOR_CHUNKS,
} from './bm25-rank';
export { constraintToSql } from './lexical-constraint.sql';
export * from './lexical-index';
export * from './lexical-query.parser';
export {
  LEXICAL_MEMORY_FLOOR,
  type LexicalMemoryLimits,
  lexicalMemoryLimits,
  processMemoryBytes,
} from './memory-limits';
export { LEXICAL_SCHEMA, lexicalIndexMigrations } from './migrations';
export * from './pg-lexical-index';
export * from './snapshot-lexical-index';
export { type PostingList, type Scoring, SpaceSnapshot, WINDOWED_FROM } from './space-snapshot';
export { Bm25SparseEncoder, SPARSE_DIMENSIONS } from './sparse/bm25-sparse-encoder';
export { referenceEncoder } from './sparse/reference';
export { IdfTable, type ReferenceStatistics } from './sparse/reference-statistics';
export type { SparseEncoder, SparseValues } from './sparse/sparse-encoder';
