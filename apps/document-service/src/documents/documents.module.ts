import { forwardRef, Module } from '@nestjs/common';
import { MulterModule } from '@nestjs/platform-express';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { KnowledgeBasesModule } from '../knowledge-bases/knowledge-bases.module';
import { TagRuleMembership } from '../pipelines/tag-rule-membership.port';
import { DocumentStatsRepository } from '../stats/document-stats.repository';
import { SqlDocumentStatsRepository } from '../stats/document-stats-sql.repository';
import { DocumentAudit } from './document-audit';
import { DocumentMembershipService } from './document-membership.service';
import { DocumentReads } from './document-reads.service';
import { DocumentStatusConsumer } from './document-status.consumer';
import { DocumentsController } from './documents.controller';
import { DocumentsRepository } from './documents.repository';
import { DocumentsService } from './documents.service';
import { SqlDocumentsRepository } from './documents-sql.repository';
import { PrecomputedChunksService } from './precomputed-chunks.service';
import { uploadOptions } from './upload.options';
import { UploadDocument } from './upload-document';

const exported = [
  { provide: DocumentsRepository, useClass: SqlDocumentsRepository },
  { provide: DocumentStatsRepository, useClass: SqlDocumentStatsRepository },
  DocumentMembershipService,
  // knowledge-bases/ moves documents in and out by tag rule through this port only.
  { provide: TagRuleMembership, useExisting: DocumentMembershipService },
  DocumentAudit,
  UploadDocument,
  DocumentsService,
  DocumentReads,
  PrecomputedChunksService,
  DocumentStatusConsumer,
];

/**
 * Documents: upload, versions, edits, ACLs, listing, pipeline statuses. Knowledge bases are
 * reached through the `KnowledgeBaseDirectory` port, which `KnowledgeBasesModule` provides.
 */
@Module({
  imports: [
    // Uploads spool to disk (UPLOAD_TMP_DIR) with the size limit, for DocumentsController.
    MulterModule.registerAsync({
      inject: [DOCUMENT_CONFIG],
      useFactory: (config: DocumentConfig) => uploadOptions(config),
    }),
    forwardRef(() => KnowledgeBasesModule),
  ],
  controllers: [DocumentsController],
  providers: exported,
  exports: exported,
})
export class DocumentsModule {}
