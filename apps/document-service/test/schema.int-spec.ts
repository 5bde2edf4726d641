import { describeMigratedSchema } from '@kb/database/test/support/migrated-schema';

import { migrations } from '../src/migrations';

/** The JSON and enum columns, typed as the code reads and writes them (JSON is written as text). */
const overrides = {
  'documents.status': 'DocumentStatus',
  'documents.failure_reason': 'FailureReason | null',
  'documents.metadata': 'ColumnType<DocumentMetadata, string, string>',
  'documents.acl': 'ColumnType<DocumentAcl, string | undefined, string>',
  'documents.stage_times': 'ColumnType<Record<string, string>, string, string>',
  'documents.size_bytes': 'ColumnType<number, number, number>',
  'documents.pii_findings':
    'ColumnType<PiiSummary | null, string | null | undefined, string | null>',
  'documents.attachments_skipped':
    'ColumnType<SkippedAttachments | null, string | null | undefined, string | null>',
  'outbox.headers': 'ColumnType<Record<string, string>, string, string>',
  'knowledge_bases.chunker': 'ColumnType<Record<string, unknown>, string, string>',
  'knowledge_bases.metadata': 'ColumnType<Record<string, unknown>, string | undefined, string>',
  'knowledge_bases.pii': 'ColumnType<PiiMode, PiiMode | undefined, PiiMode>',
  'knowledge_bases.parsing':
    'ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>',
  'source_syncs.failures':
    'ColumnType<Array<{ path: string; reason: string }>, string | undefined, string>',
};

describeMigratedSchema('document-service', {
  migrations,
  types: {
    file: `${__dirname}/../src/platform/db.generated.ts`,
    overrides,
    imports: {
      DocumentStatus: '@kb/contracts',
      FailureReason: '@kb/contracts',
      DocumentMetadata: '@kb/contracts',
      PiiMode: '@kb/contracts',
      PiiSummary: '@kb/contracts',
      SkippedAttachments: '@kb/contracts',
      DocumentAcl: '../documents/document.model',
    },
  },
});
