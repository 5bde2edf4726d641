import { buildRouteDocument, Public } from '@kb/http';
import { Controller, Get } from '@nestjs/common';

import { DocumentContentController } from './document-content/document-content.controller';
import { DocumentsController } from './documents/documents.controller';
import { ErasuresController } from './erasures/erasures.controller';
import { LegalHoldsController } from './holds/legal-holds.controller';
import { CollectionsController } from './knowledge-bases/collections.controller';
import { KnowledgeBaseDocumentsController } from './knowledge-bases/knowledge-base-documents.controller';
import { KnowledgeBasesController } from './knowledge-bases/knowledge-bases.controller';
import { PrecomputedChunksController } from './knowledge-bases/precomputed-chunks.controller';
import { RepairController } from './repair/repair.controller';
import { RetentionController } from './retention/retention.controller';
import { SourcesController } from './sources/sources.controller';
import { DocumentStatsController } from './stats/document-stats.controller';
import { UsageController } from './usage/usage.controller';

/** The controllers of the public REST API, in the order the document lists them. */
export const DOCUMENT_CONTROLLERS = [
  DocumentsController,
  KnowledgeBasesController,
  CollectionsController,
  KnowledgeBaseDocumentsController,
  PrecomputedChunksController,
  SourcesController,
  DocumentContentController,
  DocumentStatsController,
  RepairController,
  LegalHoldsController,
  RetentionController,
  ErasuresController,
  UsageController,
];

/** The REST API's OpenAPI 3 document, built from the routes' `@ApiOperation`s. */
export const DOCUMENT_OPENAPI = buildRouteDocument(
  {
    title: 'Knowledge base document API',
    version: '1',
    description:
      'Uploads, versions, ACLs, tags and metadata of a tenant\u2019s documents, their originals and extracted text, its knowledge bases and counts. Every answer is limited to what the bearer token\u2019s caller may read; a document they may not read is 404.',
  },
  DOCUMENT_CONTROLLERS,
);

@Public()
@Controller()
export class OpenApiController {
  @Get('openapi.json')
  document(): Record<string, unknown> {
    return DOCUMENT_OPENAPI;
  }
}
