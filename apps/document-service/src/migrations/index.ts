import type { Migrations } from '@kb/database';
import { createDocuments } from './20261122T1600_create_documents';
import { outboxTraceHeaders } from './20261122T2000_outbox_trace_headers';
import { documentAttributes } from './20261123T0900_document_attributes';
import { documentAcl } from './20261123T1200_document_acl';
import { knowledgeBases } from './20261123T1600_knowledge_bases';
import { redrives } from './20261124T0900_redrives';
import { tagRules } from './20261124T1000_tag_rules';
import { embeddingDimension } from './20261125T0900_embedding_dimension';

/** This service's migrations, applied in name order to its own schema. */
export const migrations: Migrations = {
  '20261122T1600_create_documents': createDocuments,
  '20261122T2000_outbox_trace_headers': outboxTraceHeaders,
  '20261123T0900_document_attributes': documentAttributes,
  '20261123T1200_document_acl': documentAcl,
  '20261123T1600_knowledge_bases': knowledgeBases,
  '20261124T0900_redrives': redrives,
  '20261124T1000_tag_rules': tagRules,
  '20261125T0900_embedding_dimension': embeddingDimension,
};
