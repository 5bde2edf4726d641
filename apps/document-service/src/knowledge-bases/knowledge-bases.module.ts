import { forwardRef, Module } from '@nestjs/common';

import { DocumentsModule } from '../documents/documents.module';
import { KnowledgeBaseDirectory } from '../pipelines/knowledge-base-directory.port';
import { CollectionsController } from './collections.controller';
import { CollectionsService } from './collections.service';
import { KnowledgeBaseBulkDelete } from './knowledge-base-bulk-delete';
import { KnowledgeBaseDirectoryService } from './knowledge-base-directory.service';
import { KnowledgeBaseDocumentsController } from './knowledge-base-documents.controller';
import { KnowledgeBasesController } from './knowledge-bases.controller';
import { KnowledgeBasesRepository } from './knowledge-bases.repository';
import { KnowledgeBasesService } from './knowledge-bases.service';
import { SqlKnowledgeBasesRepository } from './knowledge-bases-sql.repository';
import { EmbeddingServiceCatalog, MODEL_CATALOG } from './model-catalog.client';
import { PrecomputedChunksController } from './precomputed-chunks.controller';

/**
 * Knowledge bases (collections, ADR 24): every `/v1/knowledge-bases` route, their pipelines and
 * tag rules, stats, emptying and deleting. documents/ reaches them through the
 * `KnowledgeBaseDirectory` port only.
 */
@Module({
  imports: [forwardRef(() => DocumentsModule)],
  // In the order the routes registered before this module (collections' static paths first).
  controllers: [
    CollectionsController,
    KnowledgeBasesController,
    KnowledgeBaseDocumentsController,
    PrecomputedChunksController,
  ],
  providers: [
    { provide: KnowledgeBasesRepository, useClass: SqlKnowledgeBasesRepository },
    { provide: KnowledgeBaseDirectory, useClass: KnowledgeBaseDirectoryService },
    { provide: MODEL_CATALOG, useClass: EmbeddingServiceCatalog },
    KnowledgeBasesService,
    CollectionsService,
    KnowledgeBaseBulkDelete,
  ],
  exports: [KnowledgeBaseDirectory, KnowledgeBasesRepository, KnowledgeBasesService],
})
export class KnowledgeBasesModule {}
