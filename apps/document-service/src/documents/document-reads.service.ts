import type { Access } from '@kb/auth';
import type { DocumentFilterNode, TenantId } from '@kb/contracts';
import { Injectable } from '@nestjs/common';

import type { DocumentPage, DocumentView } from './document.model';
import { DocumentAudit } from './document-audit';
import { DocumentsService } from './documents.service';

/**
 * The reads a caller asks for over REST (and, through query-service, over gRPC), each audited
 * once served: `document_read` with the document, `documents_listed` with the page's documents
 * (written by the statement that reads the page; a `?externalIdPrefix=` page records its own).
 * A refused read (404) leaves no record: it returned nothing. Internal reads (the visibility check
 * before an edit) go to `DocumentsService` directly and are not reads of the caller's.
 */
@Injectable()
export class DocumentReads {
  constructor(
    private readonly documents: DocumentsService,
    private readonly audit: DocumentAudit,
  ) {}

  async get(tenantId: TenantId, access: Access, id: string): Promise<DocumentView> {
    const document = await this.documents.get(tenantId, access, id);
    await this.audit.read('document_read', access, [id], { version: document.version });
    return document;
  }

  /**
   * A page of the documents whose external id starts with `prefix` (what a sync brought),
   * audited as a listing with the page's documents and the prefix (review L5).
   */
  async listByExternalIdPrefix(
    tenantId: TenantId,
    access: Access,
    prefix: string,
    limit: number,
    cursor?: string,
  ): Promise<DocumentPage> {
    const page = await this.documents.pageByExternalIdPrefix(
      tenantId,
      access,
      prefix,
      limit,
      cursor,
    );
    await this.audit.read(
      'documents_listed',
      access,
      page.items.map((d) => d.id),
      { externalIdPrefix: prefix, limit, ...(cursor ? { cursor } : {}) },
    );
    return page;
  }

  async list(
    tenantId: TenantId,
    access: Access,
    limit: number,
    cursor?: string,
    knowledgeBaseId?: string,
    filter?: DocumentFilterNode,
  ): Promise<DocumentPage> {
    // The page and its audit record in one statement (one round trip to Postgres, not two).
    const read = this.audit.listing(access, limit, {
      limit,
      ...(cursor ? { cursor } : {}),
      ...(knowledgeBaseId ? { knowledgeBaseId } : {}),
      ...(filter ? { filter } : {}),
    });
    const page = await this.documents.list(
      tenantId,
      access,
      limit,
      cursor,
      knowledgeBaseId,
      filter,
      read,
    );
    this.audit.listed();
    return page;
  }
}
