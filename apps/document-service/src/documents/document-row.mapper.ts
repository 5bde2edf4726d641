import { toTenantId } from '@kb/contracts';
import type { Selectable } from 'kysely';

import type { DocumentsTable } from '../platform/db.types';
import type { DocumentRecord } from './document.model';

/** A `documents` row as the domain sees it (the SQL repositories' answer). */
export function toRecord(row: Selectable<DocumentsTable>): DocumentRecord {
  return {
    id: row.id,
    tenantId: toTenantId(row.tenant_id),
    title: row.title,
    filename: row.filename,
    contentType: row.content_type,
    sizeBytes: Number(row.size_bytes),
    sha256: row.sha256,
    blobKey: row.blob_key,
    version: row.version,
    status: row.status,
    failure: row.failure_reason ? { reason: row.failure_reason, detail: row.failure_detail } : null,
    chunkCount: row.chunk_count,
    metadata: row.metadata,
    tags: row.tags,
    knowledgeBaseIds: row.knowledge_base_ids,
    explicitKnowledgeBaseIds: row.explicit_knowledge_base_ids,
    ownerId: row.owner_id,
    acl: row.acl,
    principals: row.principals,
    stageTimes: row.stage_times,
    redrives: row.redrives,
    metaVersion: row.meta_version,
    externalId: row.external_id,
    inactive: row.inactive,
    expiresAt: row.expires_at ? new Date(row.expires_at) : null,
    piiFindings: row.pii_findings,
    attachedTo: row.attached_to,
    attachmentsSkipped: row.attachments_skipped,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
