export * from './api-error';
export * from './clients';
export type { paths as AclPaths } from './generated/acl';
export type {
  operations as DocumentOperations,
  paths as DocumentPaths,
} from './generated/document';
export type { paths as EmbeddingPaths } from './generated/embedding';
export type { operations as QueryOperations, paths as QueryPaths } from './generated/query';
export type { operations as WebhookOperations, paths as WebhookPaths } from './generated/webhook';
export * from './types';
