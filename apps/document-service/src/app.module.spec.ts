import { EVENT_CONSUMERS, type EventConsumer } from '@kb/kafka';
import { Test } from '@nestjs/testing';
import { AppModule } from './app.module';
import { documentConfigSchema } from './config/document.config';
import { DocumentMembershipService } from './documents/document-membership.service';
import { DocumentsService } from './documents/documents.service';
import { KnowledgeBaseDirectoryService } from './knowledge-bases/knowledge-base-directory.service';
import { KnowledgeBasesService } from './knowledge-bases/knowledge-bases.service';
import { KnowledgeBaseDirectory } from './pipelines/knowledge-base-directory.port';
import { PIPELINE_DEFAULTS } from './pipelines/pipeline-defaults.provider';
import { TagRuleMembership } from './pipelines/tag-rule-membership.port';
import { BLOB_STORE, EVENT_PRODUCER } from './platform/tokens';
import { Reconciler } from './reconciliation/reconciler.service';
import { InMemoryBlobStore } from './testing/in-memory-blob.store';

/**
 * The module wires every provider (nothing is connected: the Kafka client and the pool connect
 * on first use, and the two adapters that connect when built are replaced).
 */
describe('AppModule', () => {
  it('resolves every service, the two ports between documents and knowledge bases, and the consumers', async () => {
    const config = documentConfigSchema.parse({
      DATABASE_URL: 'postgres://kb:kb@127.0.0.1:1/kb',
      KAFKA_BROKERS: '127.0.0.1:1',
      CHUNK_SIZE: '800',
    });
    const app = await Test.createTestingModule({ imports: [AppModule.register(config)] })
      .overrideProvider(EVENT_PRODUCER)
      .useValue({})
      .overrideProvider(BLOB_STORE)
      .useValue(new InMemoryBlobStore())
      .compile();

    expect(app.get(DocumentsService)).toBeInstanceOf(DocumentsService);
    expect(app.get(KnowledgeBasesService)).toBeInstanceOf(KnowledgeBasesService);
    expect(app.get(Reconciler)).toBeInstanceOf(Reconciler);
    expect(app.get(KnowledgeBaseDirectory)).toBeInstanceOf(KnowledgeBaseDirectoryService);
    expect(app.get(TagRuleMembership)).toBe(app.get(DocumentMembershipService));
    expect(app.get(PIPELINE_DEFAULTS)).toEqual({
      chunker: { strategy: 'recursive', size: 800, overlap: 150 },
      model: config.EMBEDDING_MODEL,
    });
    expect(app.get<EventConsumer[]>(EVENT_CONSUMERS)).toHaveLength(2);
  });
});
