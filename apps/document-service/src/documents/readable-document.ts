import type { Access } from '@kb/auth';
import type { TenantId } from '@kb/contracts';

import type { DocumentRecord } from './document.model';
import { DocumentError, DocumentErrorCode } from './documents.errors';
import { type DocumentsRepository, visibilityOf } from './documents.repository';

/** A document the caller may not read answers 404, exactly like one that does not exist. */
export async function readableDocument(
  documents: DocumentsRepository,
  tenantId: TenantId,
  access: Access,
  id: string,
): Promise<DocumentRecord> {
  const document = await documents.findById(tenantId, id, visibilityOf(access));
  if (!document) throw new DocumentError(DocumentErrorCode.NotFound, `document ${id} not found`);
  return document;
}
