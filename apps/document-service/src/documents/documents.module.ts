import { forwardRef, Module } from '@nestjs/common';

import { AttachmentIntake } from '../attachments/attachment-intake';
import { MailAttachmentLinks } from '../attachments/attachment-links';
import { AttachmentsRepository } from '../attachments/attachments.repository';
import { SqlAttachmentsRepository } from '../attachments/attachments-sql.repository';
import { HeldDocuments, LegalHoldsRepository } from '../holds/legal-holds.repository';
import { SqlLegalHoldsRepository } from '../holds/legal-holds-sql.repository';
import { KnowledgeBasesModule } from '../knowledge-bases/knowledge-bases.module';
import { TagRuleMembership } from '../pipelines/tag-rule-membership.port';
import { DocumentStatsRepository } from '../stats/document-stats.repository';
import { SqlDocumentStatsRepository } from '../stats/document-stats-sql.repository';
import { DocumentAudit } from './document-audit';
import { DocumentMembershipService } from './document-membership.service';
import { DocumentReads } from './document-reads.service';
import { DocumentStatusConsumer } from './document-status.consumer';
import { DocumentsRepository } from './documents.repository';
import { DocumentsService } from './documents.service';
import { SqlDocumentsRepository } from './documents-sql.repository';
import { EditDocument } from './edit-document';
import { PrecomputedChunksService } from './precomputed-chunks.service';
import { ReplaceDocumentContent } from './replace-document-content';
import { UploadDocument } from './upload-document';

const exported = [
  { provide: DocumentsRepository, useClass: SqlDocumentsRepository },
  { provide: DocumentStatsRepository, useClass: SqlDocumentStatsRepository },
  // Every deletion path asks the legal holds (docs/adr/0052) through `HeldDocuments`.
  { provide: LegalHoldsRepository, useClass: SqlLegalHoldsRepository },
  { provide: HeldDocuments, useExisting: LegalHoldsRepository },
  DocumentMembershipService,
  // knowledge-bases/ moves documents in and out by tag rule through this port only.
  { provide: TagRuleMembership, useExisting: DocumentMembershipService },
  DocumentAudit,
  ReplaceDocumentContent,
  EditDocument,
  UploadDocument,
  DocumentsService,
  DocumentReads,
  PrecomputedChunksService,
  // A mail's attachments as documents of their own (docs/adr/0048).
  { provide: AttachmentsRepository, useClass: SqlAttachmentsRepository },
  MailAttachmentLinks,
  AttachmentIntake,
  DocumentStatusConsumer,
];

/**
 * Documents: upload, versions, edits, ACLs, listing, pipeline statuses. Knowledge bases are
 * reached through the `KnowledgeBaseDirectory` port, which `KnowledgeBasesModule` provides.
 * `DocumentsController` is served by the root module: it starts source syncs too.
 */
@Module({
  imports: [forwardRef(() => KnowledgeBasesModule)],
  providers: exported,
  exports: exported,
})
export class DocumentsModule {}
