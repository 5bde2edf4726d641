import type { DocumentMetadata, DocumentStatus, FailureReason } from '@kb/contracts';
import type { ColumnType, Generated } from 'kysely';

import type { DocumentAcl } from '../documents/document.model';

type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface DocumentsTable {
  id: string;
  tenant_id: string;
  title: string;
  filename: string;
  content_type: string;
  size_bytes: ColumnType<number, number, number>;
  sha256: string;
  blob_key: string;
  version: number;
  status: DocumentStatus;
  failure_reason: FailureReason | null;
  failure_detail: string | null;
  chunk_count: number | null;
  metadata: ColumnType<DocumentMetadata, string, string>;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  /** Membership: the explicit knowledge bases plus those whose tag rule matches the tags. */
  knowledge_base_ids: ColumnType<string[], string[] | undefined, string[]>;
  /** The knowledge bases named at upload or in an edit. */
  explicit_knowledge_base_ids: ColumnType<string[], string[] | undefined, string[]>;
  owner_id: ColumnType<string, string | undefined, string>;
  acl: ColumnType<DocumentAcl, string | undefined, string>;
  principals: ColumnType<string[], string[] | undefined, string[]>;
  /** When each status was first reached for the current version: `{ "parsing": "2026-…" }`. */
  stage_times: ColumnType<Record<string, string>, string, string>;
  /** Times reconciliation sent the current version through the pipeline again. */
  redrives: ColumnType<number, number | undefined, number>;
  /** Moved on by every ACL, attribute or membership change; its events carry it (ADR 18). */
  meta_version: ColumnType<number, number | undefined, number>;
  /** The client's own id, unique per tenant (ADR 25). */
  external_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Kept in the indexes but never found while true (ADR 25). */
  inactive: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface OutboxTable {
  id: Generated<string>;
  topic: string;
  message_key: string;
  payload: string;
  headers: ColumnType<Record<string, string>, string, string>;
  created_at: Generated<Date>;
}

export interface KnowledgeBasesTable {
  tenant_id: string;
  id: string;
  name: string;
  description: string;
  chunker: ColumnType<Record<string, unknown>, string, string>;
  embedding_model: string;
  /** Detected at creation; null for knowledge bases created before it was recorded. */
  embedding_dimension: ColumnType<number | null, number | null | undefined, number | null>;
  /** Documents carrying any of these tags belong to the knowledge base; empty, no rule. */
  tag_rule: ColumnType<string[], string[] | undefined, string[]>;
  /** Free-form, the knowledge manager's own (docs/adr/0024). */
  metadata: ColumnType<Record<string, unknown>, string | undefined, string>;
  /** Takes pre-computed vectors (docs/adr/0033); false unless a tenant admin set it. */
  allow_precomputed_vectors: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** When a periodic pass shared by the replicas last ran (one replica per interval). */
export interface ReconciliationRunsTable {
  name: string;
  ran_at: Timestamp;
}

export interface DocumentDatabase {
  documents: DocumentsTable;
  sources: SourcesTable;
  source_syncs: SourceSyncsTable;
  reconciliation_runs: ReconciliationRunsTable;
  knowledge_bases: KnowledgeBasesTable;
  outbox: OutboxTable;
}

export interface SourcesTable {
  id: string;
  tenant_id: string;
  name: string;
  kind: string;
  knowledge_base_id: string;
  bucket: string | null;
  prefix: string;
  include: ColumnType<string[], string[], string[]>;
  exclude: ColumnType<string[], string[], string[]>;
  created_by: string;
  created_at: Timestamp;
}

export interface SourceSyncsTable {
  id: string;
  tenant_id: string;
  source_id: string;
  status: string;
  added: ColumnType<number, number | undefined, number>;
  updated: ColumnType<number, number | undefined, number>;
  unchanged: ColumnType<number, number | undefined, number>;
  deleted: ColumnType<number, number | undefined, number>;
  failed: ColumnType<number, number | undefined, number>;
  failures: ColumnType<Array<{ path: string; reason: string }>, string | undefined, string>;
  started_at: Timestamp;
  finished_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  heartbeat_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}
