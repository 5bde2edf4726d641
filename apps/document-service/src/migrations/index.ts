import { loadConfig } from '@kb/config';
import type { MigrationPlan, Migrations } from '@kb/database';
import type { z } from 'zod';

import { documentConfigSchema } from '../config/document.config';
import { createDocuments } from './20261122T1600_create_documents';
import { outboxTraceHeaders } from './20261122T2000_outbox_trace_headers';
import { documentAttributes } from './20261123T0900_document_attributes';
import { documentAcl } from './20261123T1200_document_acl';
import { knowledgeBases } from './20261123T1600_knowledge_bases';
import { redrives } from './20261124T0900_redrives';
import { tagRules } from './20261124T1000_tag_rules';
import { embeddingDimension } from './20261125T0900_embedding_dimension';
import { metaVersion } from './20261126T0900_meta_version';
import { allowPrecomputedVectors } from './20261126T1555_allow_precomputed_vectors';
import { contextRerank } from './20261127T0042_context_rerank';
import { legalHoldsAndRetention } from './20261127T0327_legal_holds_and_retention';
import { pii } from './20261127T0334_pii';
import { usageAndQuotas } from './20261127T0345_usage_and_quotas';
import { knowledgeBaseParsing } from './20261127T0348_knowledge_base_parsing';
import { erasures } from './20261127T0350_erasures';
import { erasureLeases } from './20261127T0440_erasure_leases';
import { mailAttachments } from './20261127T0647_mail_attachments';
import { aclEndingIndex } from './20261127T0659_acl_ending_index';
import { knowledgeBaseMetadata } from './20261127T0900_knowledge_base_metadata';
import { externalIdsAndInactive } from './20261127T1000_external_ids_and_inactive';
import { sources } from './20261127T1010_sources';
import { sourceSchedules } from './20261127T1011_source_schedules';
import { oneRunningSync } from './20261128T1210_one_running_sync';
import { outboxLanes } from './20261128T1220_outbox_lanes';
import { resumablePasses } from './20261128T1225_resumable_passes';
import { contentHashIndex } from './20261129T0900_content_hash_index';
import { documentsUpdatedAt } from './20261129T1000_documents_updated_at';

/** This service's migrations, applied in name order to its own schema (DB_SCHEMA). */
export const migrations: Migrations = {
  '20261122T1600_create_documents': createDocuments,
  '20261122T2000_outbox_trace_headers': outboxTraceHeaders,
  '20261123T0900_document_attributes': documentAttributes,
  '20261123T1200_document_acl': documentAcl,
  '20261123T1600_knowledge_bases': knowledgeBases,
  '20261124T0900_redrives': redrives,
  '20261124T1000_tag_rules': tagRules,
  '20261125T0900_embedding_dimension': embeddingDimension,
  '20261126T0900_meta_version': metaVersion,
  '20261126T1555_allow_precomputed_vectors': allowPrecomputedVectors,
  '20261127T0042_context_rerank': contextRerank,
  '20261127T0327_legal_holds_and_retention': legalHoldsAndRetention,
  '20261127T0334_pii': pii,
  '20261127T0345_usage_and_quotas': usageAndQuotas,
  '20261127T0348_knowledge_base_parsing': knowledgeBaseParsing,
  '20261127T0350_erasures': erasures,
  '20261127T0440_erasure_leases': erasureLeases,
  '20261127T0647_mail_attachments': mailAttachments,
  '20261127T0659_acl_ending_index': aclEndingIndex,
  '20261127T0900_knowledge_base_metadata': knowledgeBaseMetadata,
  '20261127T1000_external_ids_and_inactive': externalIdsAndInactive,
  '20261127T1010_sources': sources,
  '20261127T1011_source_schedules': sourceSchedules,
  '20261128T1210_one_running_sync': oneRunningSync,
  '20261128T1220_outbox_lanes': outboxLanes,
  '20261128T1225_resumable_passes': resumablePasses,
  '20261129T0900_content_hash_index': contentHashIndex,
  '20261129T1000_documents_updated_at': documentsUpdatedAt,
};

/** The variables migrating reads: the Helm hook's container is given these and no others. */
const migrationConfigSchema = documentConfigSchema.pick({ DATABASE_URL: true, DB_SCHEMA: true });
type MigrationConfig = z.infer<typeof migrationConfigSchema>;

export const loadMigrationConfig = (): MigrationConfig => loadConfig(migrationConfigSchema);

/** What `migrate` (and the start with MIGRATE_ON_START) applies, and readiness waits for. */
export const migrationPlans = (config: MigrationConfig): MigrationPlan[] => [
  { url: config.DATABASE_URL, schema: config.DB_SCHEMA, migrations },
];
