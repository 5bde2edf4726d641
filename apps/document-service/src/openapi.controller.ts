import {
  chunkerConfigSchema,
  DOCUMENT_STATUSES,
  documentMetadataSchema,
  documentStatusSchema,
  failureReasonSchema,
  syncCountsSchema,
} from '@kb/contracts';
import { buildOpenApiDocument, Public } from '@kb/http';
import { Controller, Get } from '@nestjs/common';
import { z } from 'zod';

import { textQuerySchema } from './document-content/document-content.controller';
import {
  documentAclSchema,
  type DocumentPage,
  type DocumentView,
} from './documents/document.model';
import { DOCUMENT_STATES } from './documents/document.model';
import { jsonPart, jsonUploadSchema, label } from './documents/document-fields';
import { editSchema, listQuerySchema, uploadFieldsSchema } from './documents/documents.controller';
import {
  deleteQuerySchema,
  metadataValuesQuerySchema,
} from './knowledge-bases/collections.controller';
import {
  createKnowledgeBaseSchema,
  type KnowledgeBaseView,
  listKnowledgeBasesQuerySchema,
  updateKnowledgeBaseSchema,
  updateQuerySchema,
} from './knowledge-bases/knowledge-base.model';
import { precomputedDocumentSchema } from './knowledge-bases/precomputed-chunks.controller';
import { createSourceSchema } from './sources/source.model';
import { syncHistoryQuerySchema, syncQuerySchema } from './sources/sources.controller';

/** A document as the API shows it (`DocumentView`), for the OpenAPI document. */
export const documentViewSchema = z.object({
  id: z.uuid(),
  tenantId: z.string(),
  title: z.string(),
  filename: z.string(),
  contentType: z.string(),
  sizeBytes: z.number().int(),
  sha256: z.string(),
  version: z.number().int(),
  status: documentStatusSchema,
  failure: z.object({ reason: failureReasonSchema, detail: z.string().nullable() }).nullable(),
  chunkCount: z.number().int().nullable(),
  metadata: documentMetadataSchema,
  tags: z.array(z.string()),
  knowledgeBaseIds: z.array(z.string()),
  explicitKnowledgeBaseIds: z.array(z.string()),
  ownerId: z.string(),
  acl: documentAclSchema,
  stageTimes: z.partialRecord(documentStatusSchema, z.string()),
  externalId: z.string().nullable(),
  state: z.enum(DOCUMENT_STATES),
  createdAt: z.string(),
  updatedAt: z.string(),
  duplicate: z.literal(true).optional(),
  unchanged: z.literal(true).optional(),
});

const sourceViewSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  knowledgeBaseId: z.string(),
  kind: z.enum(['s3', 'folder']),
  bucket: z.string().nullable(),
  prefix: z.string(),
  include: z.array(z.string()),
  exclude: z.array(z.string()),
  createdBy: z.string(),
  createdAt: z.string(),
  externalIdPrefix: z.string(),
});

const syncViewSchema = z.object({
  id: z.uuid(),
  sourceId: z.uuid(),
  status: z.enum(['running', 'succeeded', 'failed']),
  counts: syncCountsSchema,
  failures: z.array(z.object({ path: z.string(), reason: z.string() })),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
});

const sourceId = { name: 'id', in: 'path' as const, schema: z.uuid() };

export const documentPageSchema = z.object({
  items: z.array(documentViewSchema),
  nextCursor: z.string().nullable(),
});

const knowledgeBaseViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  chunker: chunkerConfigSchema,
  embeddingModel: z.string(),
  embeddingDimension: z.number().int().nullable(),
  tagRule: z.object({ anyOf: z.array(z.string()) }),
  metadata: z.record(z.string(), z.unknown()),
  allowPrecomputedVectors: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const knowledgeBaseStatsSchema = z.object({
  status: z
    .enum(['indexing', 'active', 'error'])
    .describe(
      'indexing while a document is in the pipeline, else error when one failed, else active',
    ),
  documentCount: z.number().int(),
  documentsByStatus: z.record(z.enum(DOCUMENT_STATUSES), z.number().int()),
  chunkCount: z.number().int(),
  bytes: z.number().int(),
  lastIndexedAt: z.string().nullable(),
  scope: z.enum(['readable', 'all']),
});
const knowledgeBasePageSchema = z.object({
  items: z.array(knowledgeBaseViewSchema.extend({ stats: knowledgeBaseStatsSchema.optional() })),
  total: z.number().int(),
  nextCursor: z.string().nullable(),
});
const queryParameters = (schema: z.ZodObject) =>
  Object.entries(schema.shape).map(([name, value]) => ({
    name,
    in: 'query' as const,
    schema: value as z.ZodType,
  }));

const id = z.uuid().describe('The document id.');
const counts = z.object({
  documents: z.number().int(),
  chunks: z.number().int(),
  byStatus: z.record(
    z.enum(DOCUMENT_STATUSES),
    z.object({ documents: z.number().int(), chunks: z.number().int() }),
  ),
});
const documentTextSchema = z.object({
  documentId: z.uuid(),
  version: z.number().int(),
  title: z.string(),
  contentType: z.string(),
  format: z
    .string()
    .describe('How the parser read it: text, markdown, html, csv, json, code, pdf, docx.'),
  length: z
    .number()
    .int()
    .describe('The whole text, in UTF-16 code units (the unit of hit offsets).'),
  offset: z.number().int(),
  text: z.string(),
  nextOffset: z
    .number()
    .int()
    .nullable()
    .describe('Where the next window starts; null at the end.'),
  pages: z.array(
    z.object({ page: z.number().int(), start: z.number().int(), end: z.number().int() }),
  ),
  headings: z.array(
    z.object({ start: z.number().int(), level: z.number().int(), text: z.string() }),
  ),
});
const statsSchema = z.object({
  scope: z.enum(['readable', 'all']),
  totals: counts,
  knowledgeBases: z.array(counts.extend({ id: z.string(), name: z.string() })),
});

// The views are TypeScript interfaces; these lines stop the schemas drifting from them.
const documentViewMatches: z.input<typeof documentViewSchema> = {} as DocumentView;
const documentPageMatches: z.input<typeof documentPageSchema> = {} as DocumentPage;
const knowledgeBaseMatches: z.input<typeof knowledgeBaseViewSchema> = {} as KnowledgeBaseView;
void [documentViewMatches, documentPageMatches, knowledgeBaseMatches];

const documentId = {
  name: 'id',
  in: 'path' as const,
  schema: z.uuid({ version: 'v4' }),
  description: 'The document id (a UUID v4).',
};
const knowledgeBaseId = {
  name: 'id',
  in: 'path' as const,
  schema: z.string(),
  description: 'The knowledge base id.',
};
const listParameters = [
  { name: 'limit', in: 'query' as const, schema: listQuerySchema.shape.limit },
  {
    name: 'cursor',
    in: 'query' as const,
    schema: listQuerySchema.shape.cursor,
    description: 'The `nextCursor` of the previous page.',
  },
  {
    name: 'where',
    in: 'query' as const,
    schema: listQuerySchema.shape.where,
    description:
      'A filter as JSON (docs/adr/0007): document_id, tags, status, content_type, created_at, updated_at (ISO 8601 or epoch ms; uploaded_at = created_at) and metadata.<key>, with $eq $ne $in $nin $gt $gte $lt $lte $exists $and $or. A bad filter is 400 invalid_filter.',
  },
];

/** The REST API's OpenAPI 3 document, generated from the schemas that validate requests. */
export const DOCUMENT_OPENAPI = buildOpenApiDocument(
  {
    title: 'Knowledge base document API',
    version: '1',
    description:
      'Uploads, versions, ACLs, tags and metadata of a tenant\u2019s documents, their originals and extracted text, its knowledge bases and counts. Every answer is limited to what the bearer token\u2019s caller may read; a document they may not read is 404.',
  },
  [
    {
      method: 'post',
      path: '/v1/documents',
      operationId: 'uploadDocument',
      summary:
        'Upload a document as a file (multipart) or as JSON text (202); the same externalId again is its next version; 200 for the tenant\u2019s copy of the same content',
      multipart: {
        // The deprecated snake_case name still works until its Sunset (ADR 25).
        fields: uploadFieldsSchema.extend({
          knowledge_base_ids: jsonPart(z.array(label).min(1).max(16), 'ids').meta({
            deprecated: true,
            description: 'Deprecated: use knowledgeBaseIds.',
          }),
        }),
        files: ['file'],
        requiredFiles: ['file'],
      },
      body: jsonUploadSchema,
      status: 202,
      response: documentViewSchema,
      alsoStatuses: [200],
      errors: [403, 404, 409, 413, 415],
    },
    {
      method: 'get',
      path: '/v1/documents',
      operationId: 'listDocuments',
      summary:
        'The documents the caller may read matching `where`, newest first, a page at a time (limit ≤ 1000, default 100); with externalIdPrefix (and no `where`), those whose external id starts with it (what a sync brought), a page at a time in external-id order',
      parameters: [
        ...listParameters,
        {
          name: 'externalIdPrefix',
          in: 'query' as const,
          schema: z.string().min(1).max(200),
          description:
            "Only documents whose externalId starts with this, in externalId order (byte order), paged by `limit` and `cursor` (this listing's cursors may be up to 4400 characters).",
        },
      ],
      status: 200,
      response: documentPageSchema,
      errors: [400],
    },
    {
      method: 'get',
      path: '/v1/documents/{id}',
      operationId: 'getDocument',
      summary: 'One document, 404 when it does not exist or the caller may not read it',
      parameters: [documentId],
      status: 200,
      response: documentViewSchema,
      errors: [404],
    },
    {
      method: 'patch',
      path: '/v1/documents/{id}',
      operationId: 'editDocument',
      summary:
        'Edit tags, metadata, knowledge bases or state (inactive: kept indexed, never found), without a new version',
      parameters: [documentId],
      body: editSchema,
      status: 200,
      response: documentViewSchema,
      errors: [403, 404, 413],
    },
    {
      method: 'delete',
      path: '/v1/documents/{id}',
      operationId: 'deleteDocument',
      summary: 'Delete a document; the indexes drop its chunks asynchronously',
      parameters: [documentId],
      status: 200,
      response: z.object({
        documentId: z.uuid(),
        blobDeleted: z.boolean().optional(),
        indexRemoval: z.literal('scheduled'),
      }),
      errors: [403, 404],
    },
    {
      method: 'put',
      path: '/v1/documents/{id}/content',
      operationId: 'replaceContent',
      summary: 'New content: the next version (202), or 200 `unchanged` for the same bytes',
      parameters: [documentId],
      multipart: { fields: z.object({}), files: ['file'], requiredFiles: ['file'] },
      status: 202,
      response: documentViewSchema,
      alsoStatuses: [200],
      errors: [403, 404, 413, 415],
    },
    {
      method: 'put',
      path: '/v1/documents/{id}/acl',
      operationId: 'setAcl',
      summary: 'Replace who may read the document (owner or tenant admin)',
      parameters: [documentId],
      body: documentAclSchema,
      status: 200,
      response: documentViewSchema,
      errors: [403, 404, 413],
    },
    {
      method: 'post',
      path: '/v1/knowledge-bases',
      operationId: 'createKnowledgeBase',
      summary: 'Create a knowledge base with its chunker, embedding model and tag rule',
      body: createKnowledgeBaseSchema,
      status: 201,
      response: knowledgeBaseViewSchema,
      errors: [403, 409, 413],
    },
    {
      method: 'get',
      path: '/v1/knowledge-bases',
      operationId: 'listKnowledgeBases',
      summary:
        'A page of the tenant\u2019s knowledge bases by id (cursor or offset), filtered by `name`, with `total` and each one\u2019s stats over what the caller may read',
      parameters: queryParameters(listKnowledgeBasesQuerySchema),
      status: 200,
      response: knowledgeBasePageSchema,
      errors: [400],
    },
    {
      method: 'get',
      path: '/v1/knowledge-bases/{id}/stats',
      operationId: 'getKnowledgeBaseStats',
      summary:
        'Status, documents by status, chunks, bytes and last indexing, over what the caller may read',
      parameters: [knowledgeBaseId],
      status: 200,
      response: knowledgeBaseStatsSchema.extend({ knowledgeBaseId: z.string() }),
      errors: [404],
    },
    {
      method: 'get',
      path: '/v1/knowledge-bases/{id}/metadata-values',
      operationId: 'getKnowledgeBaseMetadataValues',
      summary:
        'Distinct values of a metadata key (or tags) among the documents the caller may read, sorted, with counts',
      parameters: [knowledgeBaseId, ...queryParameters(metadataValuesQuerySchema)],
      status: 200,
      response: z.object({
        knowledgeBaseId: z.string(),
        field: z.string(),
        values: z.array(
          z.object({
            value: z.union([z.string(), z.number(), z.boolean()]),
            count: z.number().int(),
          }),
        ),
        truncated: z.boolean(),
      }),
      errors: [400, 404],
    },
    {
      method: 'delete',
      path: '/v1/knowledge-bases/{id}/documents',
      operationId: 'emptyKnowledgeBase',
      summary:
        'Empty it, keeping its configuration: one job deleting the documents only it holds and unlinking the others (readable ones). They leave search when it answers; their chunks leave the indexes right after, in batches of 1,000 (indexRemoval: scheduled)',
      parameters: [knowledgeBaseId],
      status: 200,
      response: z.object({
        jobId: z.uuid(),
        knowledgeBaseId: z.string(),
        status: z.literal('completed'),
        deletedCount: z.number().int(),
        unlinkedCount: z.number().int(),
        retainedCount: z.number().int(),
        indexRemoval: z.literal('scheduled'),
        tookMs: z.number().int(),
      }),
      errors: [403, 404],
    },
    {
      method: 'get',
      path: '/v1/knowledge-bases/{id}',
      operationId: 'getKnowledgeBase',
      summary: 'One knowledge base',
      parameters: [knowledgeBaseId],
      status: 200,
      response: knowledgeBaseViewSchema,
      errors: [404],
    },
    {
      method: 'patch',
      path: '/v1/knowledge-bases/{id}',
      operationId: 'updateKnowledgeBase',
      summary:
        'Rename, describe, change the tag rule or the metadata (merged unless merge=false); chunker and model are immutable (409)',
      parameters: [knowledgeBaseId, ...queryParameters(updateQuerySchema.in)],
      body: updateKnowledgeBaseSchema,
      status: 200,
      response: knowledgeBaseViewSchema,
      errors: [403, 404, 409, 413],
    },
    {
      method: 'delete',
      path: '/v1/knowledge-bases/{id}',
      operationId: 'deleteKnowledgeBase',
      summary:
        'Delete a knowledge base: 409 while it holds a document the caller reads, unless cascade=true (deletes those only it holds, unlinks the others)',
      parameters: [knowledgeBaseId, ...queryParameters(deleteQuerySchema.in)],
      status: 200,
      response: z.object({
        id: z.string(),
        cascade: z.boolean(),
        deletedCount: z.number().int(),
        unlinkedCount: z.number().int(),
        indexRemoval: z.literal('scheduled'),
      }),
      errors: [403, 404, 409],
    },
    {
      method: 'get',
      path: '/v1/knowledge-bases/{id}/documents',
      operationId: 'listKnowledgeBaseDocuments',
      summary:
        'The knowledge base\u2019s documents the caller may read matching `where`, newest first',
      parameters: [knowledgeBaseId, ...listParameters],
      status: 200,
      response: documentPageSchema,
      errors: [400, 404],
    },
    {
      method: 'post',
      path: '/v1/knowledge-bases/{id}/chunks',
      operationId: 'uploadPrecomputedChunks',
      summary:
        'A document of pre-computed chunks with embeddings (indexed without parsing or embedding), into a knowledge base a tenant admin set allowPrecomputedVectors on (409 precomputed_vectors_disabled otherwise); 400 invalid_chunk names a chunk whose embedding is missing or of another dimension, 400 invalid_vector one whose values are not finite or whose L2 norm is not 1 (±1 %)',
      parameters: [knowledgeBaseId],
      body: precomputedDocumentSchema,
      status: 202,
      alsoStatuses: [200],
      response: documentViewSchema,
      errors: [403, 404, 409],
    },
    {
      method: 'post',
      path: '/v1/sources',
      operationId: 'createSource',
      summary:
        'A source bound to a knowledge base: an S3 bucket and prefix (synced by the server) or a folder (synced by kb sync), with include and exclude globs',
      body: createSourceSchema,
      status: 201,
      response: sourceViewSchema,
      errors: [403],
    },
    {
      method: 'get',
      path: '/v1/sources',
      operationId: 'listSources',
      summary: 'The tenant\u2019s sources',
      status: 200,
      response: z.object({ items: z.array(sourceViewSchema) }),
    },
    {
      method: 'get',
      path: '/v1/sources/{id}',
      operationId: 'getSource',
      summary: 'One source',
      parameters: [sourceId],
      status: 200,
      response: sourceViewSchema,
      errors: [404],
    },
    {
      method: 'delete',
      path: '/v1/sources/{id}',
      operationId: 'deleteSource',
      summary: 'Delete a source and its sync history; the documents it brought stay',
      parameters: [sourceId],
      status: 200,
      response: z.object({ sourceId: z.uuid() }),
      errors: [403, 404],
    },
    {
      method: 'post',
      path: '/v1/sources/{id}/sync',
      operationId: 'syncSource',
      summary:
        'Sync an S3 source now: new files uploaded, changed ones a new version, removed ones deleted; answers the finished sync with its counts (200), or with wait=false the running sync at once (202, follow it at /v1/sources/{id}/syncs/{syncId}). One sync per source at a time: 409 sync_in_progress',
      parameters: [sourceId, { name: 'wait', in: 'query', schema: syncQuerySchema.shape.wait }],
      status: 200,
      alsoStatuses: [202],
      response: syncViewSchema,
      errors: [403, 404, 409],
    },
    {
      method: 'get',
      path: '/v1/sources/{id}/syncs/{syncId}',
      operationId: 'getSourceSync',
      summary: 'One sync of the source: running, or finished with its counts and failures',
      parameters: [
        sourceId,
        { name: 'syncId', in: 'path', schema: z.uuid(), description: 'The sync id.' },
      ],
      status: 200,
      response: syncViewSchema,
      errors: [404],
    },
    {
      method: 'get',
      path: '/v1/sources/{id}/syncs',
      operationId: 'listSourceSyncs',
      summary: 'The source\u2019s sync history, newest first',
      parameters: [
        sourceId,
        { name: 'limit', in: 'query', schema: syncHistoryQuerySchema.shape.limit },
      ],
      status: 200,
      response: z.object({ items: z.array(syncViewSchema) }),
      errors: [404],
    },
    {
      method: 'get',
      path: '/v1/documents/{id}/content',
      operationId: 'getDocumentContent',
      summary:
        'The original as uploaded; ETag is the SHA-256; a Range header (bytes=a-b, a-, -n) gives 206, or 416 past the end',
      parameters: [{ name: 'id', in: 'path', schema: id }],
      status: 200,
      alsoStatuses: [206],
      // The original's own content type, whatever was uploaded.
      responseMediaType: '*/*',
      response: z.string().meta({ format: 'binary' }),
      errors: [404, 416],
    },
    {
      method: 'get',
      path: '/v1/documents/{id}/text',
      operationId: 'getDocumentText',
      summary: 'A window of the extracted text, with its page and heading maps',
      parameters: [
        { name: 'id', in: 'path', schema: id },
        ...Object.entries(textQuerySchema.shape).map(([name, schema]) => ({
          name,
          in: 'query' as const,
          schema,
        })),
      ],
      status: 200,
      response: documentTextSchema,
      errors: [404, 409],
    },
    {
      method: 'get',
      path: '/v1/stats',
      operationId: 'getStats',
      summary: 'Documents and chunks by status, in total and per knowledge base (readable ones)',
      status: 200,
      response: statsSchema,
    },
  ],
);

@Public()
@Controller()
export class OpenApiController {
  @Get('openapi.json')
  document(): Record<string, unknown> {
    return DOCUMENT_OPENAPI;
  }
}
