import type { Access, Caller } from '@kb/auth';
import { ApiOperation, Authenticated, CurrentAccess, CurrentCaller, parseBody } from '@kb/http';
import { Controller, Get, Param, Query } from '@nestjs/common';

import { type DocumentPage, documentPageSchema } from '../documents/document.model';
import { listQuerySchema, parseWhere } from '../documents/document-listing';
import { DocumentReads } from '../documents/document-reads.service';
import { listParameters } from '../documents/documents.openapi';
import { KnowledgeBaseDirectory } from '../pipelines/knowledge-base-directory.port';
import { knowledgeBaseIdParameter } from './knowledge-bases.openapi';

/** The documents of one knowledge base, beside the knowledge bases' own routes. */
@Controller('v1/knowledge-bases')
export class KnowledgeBaseDocumentsController {
  constructor(
    private readonly documents: DocumentReads,
    private readonly knowledgeBases: KnowledgeBaseDirectory,
  ) {}

  /** The knowledge base's documents the caller may read, newest first, matching `where`. */
  @Get(':id/documents')
  @ApiOperation({
    operationId: 'listKnowledgeBaseDocuments',
    summary:
      'The knowledge base\u2019s documents the caller may read matching `where`, newest first',
    parameters: [knowledgeBaseIdParameter, ...listParameters],
    response: documentPageSchema,
    errors: [404],
  })
  @Authenticated({ access: true, rateLimit: 'read' })
  async listDocuments(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id') id: string,
    @Query() query: unknown,
  ): Promise<DocumentPage> {
    await this.knowledgeBases.requireFound(caller.tenantId, id);
    const { limit, cursor, where } = parseBody(listQuerySchema, query);
    return this.documents.list(caller.tenantId, access, limit, cursor, id, parseWhere(where));
  }
}
