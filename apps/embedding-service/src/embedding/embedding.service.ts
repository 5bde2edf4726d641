import {
  type DocumentParsed,
  type EmbeddedChunks,
  eventKnowledgeBases,
  parsedDocumentSchema,
  type PipelineRef,
  Topics,
} from '@kb/contracts';
import {
  checkIn,
  checkOut,
  claimOfTenant,
  type EventProducer,
  PermanentError,
  spaceOfTenant,
} from '@kb/kafka';
import { meter, withKnowledgeBase, withSpan } from '@kb/observability';
import type { BlobStore } from '@kb/storage';
import { Inject, Injectable, Logger } from '@nestjs/common';

import type { CachedEmbedder } from '../cache/cached.embedder';
import { BLOB_STORE, EMBEDDER, EVENT_PRODUCER } from '../platform/tokens';
import { toConsumerError } from './embedding.errors';

/** Where the embeddings of one document version are stored when too large to carry. */
export const embeddingsKey = (
  tenantId: string,
  documentId: string,
  version: number,
  model: string,
) => `derived/${tenantId}/${documentId}/v${version}/embeddings.${model}.json`;

const chunksEmbedded = meter().createCounter('kb_chunks_embedded_total', {
  description: "Chunks embedded, by model and knowledge base (the pipeline's; ADR 41)",
});
const embeddingDuration = meter().createHistogram('kb_embedding_duration_ms', {
  description: 'Time to embed one document version (all its batches), by model and knowledge base',
  unit: 'ms',
});

@Injectable()
export class EmbeddingService {
  private readonly logger = new Logger(EmbeddingService.name);

  constructor(
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(EVENT_PRODUCER) private readonly producer: EventProducer,
    /** Every served model's embedder (through the cache), by model name. */
    @Inject(EMBEDDER) private readonly embedders: ReadonlyMap<string, CachedEmbedder>,
  ) {}

  /** The embedder of the model the pipeline names. */
  private embedderFor(pipeline: PipelineRef): CachedEmbedder {
    const embedder = this.embedders.get(pipeline.model);
    if (!embedder) {
      throw new PermanentError(
        'embedding_error',
        `model "${pipeline.model}" is not served here (served: ${[...this.embedders.keys()].join(', ')})`,
      );
    }
    return embedder;
  }

  /** Embeds every chunk of a parsed document version in batches and stores the vectors. */
  async embedDocument(tenantId: string, parsed: DocumentParsed): Promise<void> {
    await withSpan(
      'kb.embed',
      {
        'kb.tenant_id': tenantId,
        'kb.document_id': parsed.documentId,
        'kb.version': parsed.version,
        'kb.chunks': parsed.chunkCount,
      },
      () => this.embedInSpan(tenantId, parsed),
    );
  }

  private async embedInSpan(tenantId: string, parsed: DocumentParsed): Promise<void> {
    const { documentId, version } = parsed;
    const { pipeline } = parsed;
    // The chunks read and the space named must be this tenant's (dead-lettered otherwise).
    spaceOfTenant(tenantId, pipeline.space, 'embedding_error');
    const claim = claimOfTenant(parsed.chunks, tenantId, 'embedding_error');
    await this.producer.publish({
      topic: Topics.documentStatus,
      tenantId,
      key: documentId,
      payload: { documentId, version, status: 'embedding' },
    });
    const embedder = this.embedderFor(pipeline);
    const { model, dimension } = embedder.provider;
    const document = await checkOut(this.blobs, claim, parsedDocumentSchema);
    const started = performance.now();
    // Through the cache: unchanged chunk texts (any tenant, document or version) skip the model.
    // The tenant keys a remote API's rate limit.
    const vectors = await embedder.embed(document.chunks, { tenantId }).catch((error: unknown) => {
      throw toConsumerError(error);
    });
    const output: EmbeddedChunks = {
      documentId,
      version,
      title: document.title,
      model,
      dimension,
      chunks: document.chunks.map((chunk, i) => {
        const vector = vectors[i];
        // An empty vector would be stored and indexed as if it were one, and never match.
        if (!vector) {
          throw new PermanentError(
            'embedding_error',
            `model "${model}" returned no vector for chunk ${chunk.index} of document ${documentId} v${version}`,
          );
        }
        return { ...chunk, vector };
      }),
    };
    const labels = withKnowledgeBase({ model }, eventKnowledgeBases(parsed));
    chunksEmbedded.add(output.chunks.length, labels);
    embeddingDuration.record(performance.now() - started, labels);
    const key = embeddingsKey(tenantId, documentId, version, `${model}.${pipeline.key}`);
    // Carried in the event when small (most documents), stored in S3 when not (ADR 4).
    const embeddings = await checkIn(this.blobs, key, output);
    await this.producer.publish({
      topic: Topics.chunksEmbedded,
      tenantId,
      key: documentId,
      payload: {
        documentId,
        version,
        model,
        dimension,
        chunkCount: output.chunks.length,
        embeddings,
        attributes: parsed.attributes,
        pipeline,
      },
    });
    this.logger.log(
      `embedded document ${documentId} v${version}: ${output.chunks.length} chunks in ${Math.round(performance.now() - started)} ms`,
    );
  }
}
