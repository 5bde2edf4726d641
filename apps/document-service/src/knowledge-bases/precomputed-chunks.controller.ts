import type { Access, Caller, Permission } from '@kb/auth';
import { documentMetadataSchema } from '@kb/contracts';
import {
  ApiOperation,
  Authenticated,
  BodyLimit,
  CurrentAccess,
  CurrentCaller,
  parseBody,
} from '@kb/http';
import { Body, Controller, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { z } from 'zod';

import {
  documentAclSchema,
  type DocumentView,
  documentViewSchema,
} from '../documents/document.model';
import { externalIdSchema, label } from '../documents/document-fields';
import { PrecomputedChunksService } from '../documents/precomputed-chunks.service';
import { knowledgeBaseIdParameter } from './knowledge-bases.openapi';

/** 2,000 chunks a request; a larger document goes in several versions or as a file. */
export const MAX_PRECOMPUTED_CHUNKS = 2000;

/**
 * A document of pre-computed chunks. `embedding` is optional in the schema so that a missing
 * one is answered by the service with `invalid_chunk` naming the chunk, like a wrong dimension.
 */
const precomputedDocumentSchema = z
  .object({
    title: z.string().min(1).max(500),
    externalId: externalIdSchema.optional(),
    metadata: documentMetadataSchema.optional(),
    tags: z.array(label).max(64).optional(),
    acl: documentAclSchema.optional(),
    chunks: z
      .array(
        z
          .object({
            id: z.string().max(200).optional(),
            text: z.string().min(1).max(100_000),
            embedding: z.array(z.number().finite()).max(8192).optional(),
            page: z.number().int().min(1).optional(),
            headingPath: z.array(z.string().max(500)).max(16).optional(),
          })
          .strict(),
      )
      .min(1)
      .max(MAX_PRECOMPUTED_CHUNKS),
  })
  .strict();

/**
 * A batch of chunks with their embeddings (2,000 chunks of 384 numbers is about 15 MB of JSON).
 * Read only after the guard: write permission and the upload rate limit.
 */
export const PRECOMPUTED_BODY_LIMIT = '16mb';

const WRITE_DOCUMENTS: Permission = { action: 'write', resource: 'documents' };

/** Pre-computed chunks into a knowledge base, beside the knowledge bases' own routes (ADR 25). */
@Controller('v1/knowledge-bases')
export class PrecomputedChunksController {
  constructor(private readonly chunks: PrecomputedChunksService) {}

  /**
   * A document made of the client's chunks and embeddings: 202 (indexing follows without
   * parsing or embedding); 200 with `duplicate` or `unchanged` like an upload. 400
   * `invalid_chunk` naming the chunk whose embedding is missing or of another dimension.
   */
  @Post(':id/chunks')
  @ApiOperation({
    operationId: 'uploadPrecomputedChunks',
    summary:
      'A document of pre-computed chunks with embeddings (indexed without parsing or embedding), into a knowledge base a tenant admin set allowPrecomputedVectors on (409 precomputed_vectors_disabled otherwise); 400 invalid_chunk names a chunk whose embedding is missing or of another dimension, 400 invalid_vector one whose values are not finite or whose L2 norm is not 1 (±1 %)',
    parameters: [knowledgeBaseIdParameter],
    body: precomputedDocumentSchema,
    status: 202,
    alsoStatuses: [200],
    response: documentViewSchema,
    errors: [403, 404, 409],
  })
  @Authenticated({ access: true, permission: WRITE_DOCUMENTS, rateLimit: 'upload' })
  @BodyLimit(PRECOMPUTED_BODY_LIMIT)
  async upload(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id') id: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) response: Response,
  ): Promise<DocumentView> {
    const document = await this.chunks.upload(
      caller.tenantId,
      access,
      id,
      parseBody(precomputedDocumentSchema, body),
    );
    response.status(document.duplicate || document.unchanged ? 200 : 202);
    return document;
  }
}
