import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';

import type { Access } from '@kb/auth';
import { type DocumentMetadata, type EmbeddedChunks, type TenantId, Topics } from '@kb/contracts';
import { derivedPrefix } from '@kb/kafka';
import { type BlobStore, putJson } from '@kb/storage';
import { Inject, Injectable } from '@nestjs/common';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { OutboxWriter } from '../outbox/outbox.writer';
import { KnowledgeBaseDirectory } from '../pipelines/knowledge-base-directory.port';
import { BLOB_STORE } from '../platform/tokens';
import type { Trx } from '../platform/transaction.runner';
import type { DocumentAcl, DocumentRecord, DocumentView } from './document.model';
import { spoolText } from './document-content.storage';
import { uploadedEventOf } from './document-events.builder';
import { DocumentMembershipService } from './document-membership.service';
import { DocumentError, DocumentErrorCode } from './documents.errors';
import { DocumentsService } from './documents.service';
import { PrecomputedChunksError, PrecomputedChunksErrorCode } from './precomputed-chunks.errors';

/** One pre-computed chunk: its text and its embedding, made by the client's own model. */
export interface PrecomputedChunk {
  /** The client's name for the chunk, used in errors. */
  id?: string | undefined;
  text: string;
  embedding?: number[] | undefined;
  page?: number | undefined;
  headingPath?: string[] | undefined;
}

export interface PrecomputedDocument {
  title: string;
  chunks: PrecomputedChunk[];
  metadata?: DocumentMetadata | undefined;
  tags?: string[] | undefined;
  acl?: DocumentAcl | undefined;
  externalId?: string | undefined;
}

/**
 * How far a pre-computed embedding's L2 norm may be from 1. Every model this deployment serves
 * gives unit vectors (the ONNX models normalize, the OpenAI-compatible provider normalizes what it
 * receives, the test model too; `EmbeddingProvider`), queries are embedded by the same model, and
 * a knowledge base's vectors must be that model's: so a vector of another length is not one of
 * them. 1 % leaves room for a client that stores vectors as float16 or rounds them (ADR 33).
 */
export const UNIT_NORM_TOLERANCE = 0.01;

/** Between two chunks in the document's text (the original stored in S3). */
const SEPARATOR = '\n\n';

/** Where the client's embeddings are stored for indexing: beside the pipeline's own. */
export const precomputedKey = (
  tenantId: string,
  documentId: string,
  version: number,
  pipelineKey: string,
): string =>
  `${derivedPrefix(tenantId)}${documentId}/v${version}/embeddings.precomputed.${pipelineKey}.json`;

/**
 * `POST /v1/knowledge-bases/{id}/chunks`: a document made of chunks the client embedded itself
 * (ADR 25). Every chunk needs an embedding of the knowledge base's dimension (400
 * `invalid_chunk` naming it), of finite values and unit length (400 `invalid_vector`), and the
 * knowledge base must take pre-computed vectors (`allowPrecomputedVectors`, set by a tenant admin;
 * 409 `precomputed_vectors_disabled` otherwise: ADR 33). The chunks' texts joined are the document's original (so it can be
 * read, re-driven through another pipeline, deduplicated and versioned by `externalId` like any
 * upload); the chunks and their vectors skip parsing and embedding: they are stored under the
 * document's derived prefix and their `chunks_embedded` event is enqueued with the row, so
 * indexing writes them to the vector store and the lexical index (ACL and attributes included).
 */
@Injectable()
export class PrecomputedChunksService {
  constructor(
    private readonly documents: DocumentsService,
    private readonly membership: DocumentMembershipService,
    private readonly knowledgeBases: KnowledgeBaseDirectory,
    private readonly events: OutboxWriter,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(DOCUMENT_CONFIG) private readonly config: Pick<DocumentConfig, 'UPLOAD_TMP_DIR'>,
  ) {}

  async upload(
    tenantId: TenantId,
    access: Access,
    knowledgeBaseId: string,
    body: PrecomputedDocument,
  ): Promise<DocumentView> {
    const { pipeline, dimension, allowPrecomputedVectors } =
      await this.knowledgeBases.embeddingSpaceOf(tenantId, knowledgeBaseId);
    if (!allowPrecomputedVectors) {
      // A vector decoupled from its text can rank its chunk first for any query (review N9).
      throw new PrecomputedChunksError(
        PrecomputedChunksErrorCode.Disabled,
        `knowledge base "${knowledgeBaseId}" does not take pre-computed vectors: a tenant admin can allow them (allowPrecomputedVectors: true), or upload the text to be embedded`,
      );
    }
    if (pipeline.pii) {
      // Pre-computed chunks skip the parser, where PII is looked for (docs/adr/0051).
      throw new PrecomputedChunksError(
        PrecomputedChunksErrorCode.Disabled,
        `knowledge base "${knowledgeBaseId}" screens personal data (pii: ${pipeline.pii}), which pre-computed chunks would skip: upload the text to be screened and embedded`,
      );
    }
    if (dimension === undefined) {
      throw new DocumentError(
        DocumentErrorCode.InvalidChunk,
        `the dimension of knowledge base "${knowledgeBaseId}" (model ${pipeline.model}) is not known`,
      );
    }
    requireEmbeddings(body.chunks, dimension, knowledgeBaseId);
    const laidOut = layOut(body.chunks);
    const text = laidOut.map((c) => c.text).join(SEPARATOR);
    const file = await spoolText(
      this.config.UPLOAD_TMP_DIR,
      text,
      `${body.title}.txt`,
      'text/plain',
    );
    const start = (trx: Trx, document: DocumentRecord) =>
      this.start(trx, document, pipeline.key, dimension, laidOut, body.title);
    try {
      return await this.documents.upload(
        tenantId,
        access,
        file,
        {
          title: body.title,
          metadata: body.metadata,
          tags: body.tags,
          acl: body.acl,
          knowledgeBaseIds: [knowledgeBaseId],
          ...(body.externalId ? { externalId: body.externalId } : {}),
        },
        start,
      );
    } finally {
      await rm(file.path, { force: true });
    }
  }

  /**
   * The version's chunks and vectors go to indexing directly, in the pipeline of this knowledge
   * base; any other pipeline of the document (a tag rule put it in another knowledge base) gets
   * the `uploaded` event and parses the text as usual.
   */
  private async start(
    trx: Trx,
    document: DocumentRecord,
    pipelineKey: string,
    dimension: number,
    chunks: Array<LaidOutChunk>,
    title: string,
  ): Promise<void> {
    const pipelines = await this.membership.pipelinesOf(trx, document);
    const own = pipelines.find((p) => p.key === pipelineKey);
    const others = pipelines.filter((p) => p.key !== pipelineKey);
    if (!own) {
      // Cannot happen: the document is in this knowledge base. Parse it rather than lose it.
      await this.membership.sendThroughPipelines(trx, document, pipelines);
      return;
    }
    const key = precomputedKey(document.tenantId, document.id, document.version, own.key);
    const embedded: EmbeddedChunks = {
      documentId: document.id,
      version: document.version,
      title,
      model: own.model,
      dimension,
      chunks: chunks.map((chunk) => ({
        index: chunk.index,
        text: chunk.text,
        start: chunk.start,
        end: chunk.end,
        sha256: createHash('sha256').update(chunk.text).digest('hex'),
        tokenCount: chunk.text.split(/\s+/).filter(Boolean).length,
        ...(chunk.page ? { page: chunk.page } : {}),
        headingPath: chunk.headingPath ?? [],
        vector: chunk.embedding!,
      })),
    };
    await putJson(this.blobs, key, embedded);
    const uploaded = uploadedEventOf(document, this.blobs.bucket, pipelines);
    const attributes = uploaded.kind === 'uploaded' ? uploaded.attributes : undefined;
    await this.events.enqueue(trx, Topics.chunksEmbedded, document.tenantId, document.id, {
      documentId: document.id,
      version: document.version,
      model: own.model,
      dimension,
      chunkCount: chunks.length,
      embeddings: { bucket: this.blobs.bucket, key },
      attributes: attributes!,
      pipeline: {
        key: own.key,
        model: own.model,
        space: own.space,
        knowledgeBaseIds: own.knowledgeBaseIds,
        versionSpaces: pipelines.map((p) => p.space),
      },
    });
    if (others.length > 0) await this.membership.sendThroughPipelines(trx, document, others);
  }
}

interface LaidOutChunk extends PrecomputedChunk {
  index: number;
  start: number;
  end: number;
}

/** Each chunk's offsets in the document's text (the chunks joined by a blank line). */
function layOut(chunks: PrecomputedChunk[]): LaidOutChunk[] {
  let offset = 0;
  return chunks.map((chunk, index) => {
    const start = offset;
    offset += chunk.text.length + SEPARATOR.length;
    return { ...chunk, index, start, end: start + chunk.text.length };
  });
}

/**
 * 400 `invalid_chunk` naming the first chunk without an embedding or of another dimension, and
 * 400 `invalid_vector` naming the first whose values are not all finite or whose L2 norm is not
 * 1 (within `UNIT_NORM_TOLERANCE`): a huge value overflows the stores' float4 and fails indexing,
 * and a zero or outsized vector is no output of the knowledge base's model (review N9).
 */
export function requireEmbeddings(
  chunks: PrecomputedChunk[],
  dimension: number,
  knowledgeBaseId: string,
): void {
  chunks.forEach((chunk, i) => {
    const name = `chunks[${i}]${chunk.id !== undefined ? ` (id "${chunk.id}")` : ''}`;
    if (!chunk.embedding || chunk.embedding.length === 0) {
      throw new DocumentError(DocumentErrorCode.InvalidChunk, `${name} has no embedding`);
    }
    if (chunk.embedding.length !== dimension) {
      throw new DocumentError(
        DocumentErrorCode.InvalidChunk,
        `${name}: its embedding has ${chunk.embedding.length} dimensions; knowledge base "${knowledgeBaseId}" has ${dimension}`,
      );
    }
    const at = chunk.embedding.findIndex((value) => !Number.isFinite(value));
    if (at >= 0) {
      throw new PrecomputedChunksError(
        PrecomputedChunksErrorCode.InvalidVector,
        `${name}: its embedding's value ${at} is not a finite number`,
      );
    }
    const norm = Math.hypot(...chunk.embedding);
    if (!(Math.abs(norm - 1) <= UNIT_NORM_TOLERANCE)) {
      throw new PrecomputedChunksError(
        PrecomputedChunksErrorCode.InvalidVector,
        `${name}: its embedding's L2 norm is ${norm.toPrecision(4)}; knowledge base "${knowledgeBaseId}" takes unit vectors (norm 1 ± ${UNIT_NORM_TOLERANCE}), as its model gives: divide each value by the norm`,
      );
    }
  });
}
