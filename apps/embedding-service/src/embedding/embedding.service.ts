import {
  Topics,
  parsedDocumentSchema,
  type DocumentParsed,
  type EmbeddedChunks,
} from '@kb/contracts';
import type { EmbeddingProvider } from '@kb/embeddings';
import { PermanentError, type EventProducer } from '@kb/kafka';
import { meter, withSpan } from '@kb/observability';
import { getJson, putJson, type BlobStore } from '@kb/storage';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { CachedEmbedder } from '../cache/embedding-cache';
import { BLOB_STORE, EMBEDDER, EMBEDDING_PROVIDER, EVENT_PRODUCER } from '../platform/tokens';
import { toConsumerError } from './embedding.errors';

/** Where the embeddings of one document version are stored (claim check). */
export const embeddingsKey = (
  tenantId: string,
  documentId: string,
  version: number,
  model: string,
) => `derived/${tenantId}/${documentId}/v${version}/embeddings.${model}.json`;

const chunksEmbedded = meter().createCounter('kb_chunks_embedded_total', {
  description: 'Chunks embedded, by model',
});
const embeddingDuration = meter().createHistogram('kb_embedding_duration_ms', {
  description: 'Time to embed one document version (all its batches), by model',
  unit: 'ms',
});

@Injectable()
export class EmbeddingService {
  private readonly logger = new Logger(EmbeddingService.name);

  constructor(
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(EVENT_PRODUCER) private readonly producer: EventProducer,
    @Inject(EMBEDDING_PROVIDER) private readonly provider: EmbeddingProvider,
    /** Every served model's embedder (through the cache), by model name. */
    @Inject(EMBEDDER) private readonly embedders: ReadonlyMap<string, CachedEmbedder>,
  ) {}

  /** The embedder of the model a pipeline names; events from before pipelines use the default. */
  private embedderFor(parsed: DocumentParsed): CachedEmbedder {
    const model = parsed.pipeline?.model ?? this.provider.model;
    const embedder = this.embedders.get(model);
    if (!embedder) {
      throw new PermanentError(
        'embedding_error',
        `model "${model}" is not served here (served: ${[...this.embedders.keys()].join(', ')})`,
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
    await this.producer.publish({
      topic: Topics.documentStatus,
      tenantId,
      key: documentId,
      payload: { documentId, version, status: 'embedding' },
    });
    const embedder = this.embedderFor(parsed);
    const { model, dimension } = embedder.provider;
    const document = parsedDocumentSchema.parse(await getJson(this.blobs, parsed.chunks.key));
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
      chunks: document.chunks.map((chunk, i) => ({ ...chunk, vector: vectors[i] ?? [] })),
    };
    chunksEmbedded.add(output.chunks.length, { model });
    embeddingDuration.record(performance.now() - started, { model });
    const key = embeddingsKey(
      tenantId,
      documentId,
      version,
      `${model}.${parsed.pipeline?.key ?? 'default'}`,
    );
    await putJson(this.blobs, key, output);
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
        embeddings: { bucket: this.blobs.bucket, key },
        attributes: parsed.attributes,
        ...(parsed.pipeline ? { pipeline: parsed.pipeline } : {}),
      },
    });
    this.logger.log(
      `embedded document ${documentId} v${version}: ${output.chunks.length} chunks in ${Math.round(performance.now() - started)} ms`,
    );
  }
}
