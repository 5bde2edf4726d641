import type { Access, Caller } from '@kb/auth';
import { FILTER_LIMITS } from '@kb/contracts';
import {
  ApiOperation,
  Authenticated,
  CurrentAccess,
  CurrentCaller,
  parseBody,
  queryParameters,
} from '@kb/http';
import { Controller, Delete, Get, Param, Query } from '@nestjs/common';
import { z } from 'zod';

import {
  CollectionsService,
  type DeleteKnowledgeBaseResult,
  type EmptyResult,
  type MetadataValues,
} from './collections.service';
import {
  deleteKnowledgeBaseResultSchema,
  emptyResultSchema,
  type KnowledgeBasePage,
  knowledgeBasePageSchema,
  type KnowledgeBaseStats,
  knowledgeBaseStatsSchema,
  listKnowledgeBasesQuerySchema,
  metadataValuesSchema,
} from './knowledge-base.model';
import { KnowledgeBaseError, KnowledgeBaseErrorCode } from './knowledge-bases.errors';
import { knowledgeBaseIdParameter as knowledgeBaseId } from './knowledge-bases.openapi';

const deleteQuerySchema = z
  .object({ cascade: z.enum(['true', 'false']).default('false') })
  .strict()
  .transform(({ cascade }) => ({ cascade: cascade === 'true' }));

const metadataValuesQuerySchema = z
  .object({
    /** `tags`, `metadata.<key>` or `<key>`. */
    field: z.string().min(1).max(80),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
  })
  .strict();

/** `tags`, or a metadata key (with or without its `metadata.` prefix). */
function fieldOf(field: string): { kind: 'tags' } | { kind: 'metadata'; key: string } {
  if (field === 'tags') return { kind: 'tags' };
  const key = field.startsWith('metadata.') ? field.slice('metadata.'.length) : field;
  if (!FILTER_LIMITS.metadataKey.test(key)) {
    throw new KnowledgeBaseError(
      KnowledgeBaseErrorCode.InvalidField,
      `field "${field}" is neither tags nor a metadata key (a letter, then up to 63 letters, digits, "_" or "-")`,
    );
  }
  return { kind: 'metadata', key };
}

/** A knowledge base as a collection: its stats, its metadata's values, emptying and deleting it. */
@Controller('v1/knowledge-bases')
export class CollectionsController {
  constructor(private readonly collections: CollectionsService) {}

  /**
   * A page of the tenant's knowledge bases by id (`limit`, then `cursor` or `offset`), those
   * whose name or id holds `name`, with `total` and each one's stats over what the caller reads.
   */
  @Get()
  @ApiOperation({
    operationId: 'listKnowledgeBases',
    summary:
      'A page of the tenant\u2019s knowledge bases by id (cursor or offset), filtered by `name`, with `total` and each one\u2019s stats over what the caller may read',
    parameters: queryParameters(listKnowledgeBasesQuerySchema),
    response: knowledgeBasePageSchema,
  })
  @Authenticated({ access: true, rateLimit: 'read' })
  async list(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Query() query: unknown,
  ): Promise<KnowledgeBasePage> {
    return this.collections.list(
      caller.tenantId,
      access,
      parseBody(listKnowledgeBasesQuerySchema, query),
    );
  }

  /** Status and counts over the documents the caller may read. */
  @Get(':id/stats')
  @ApiOperation({
    operationId: 'getKnowledgeBaseStats',
    summary:
      'Status, documents by status, chunks, bytes and last indexing, over what the caller may read',
    parameters: [knowledgeBaseId],
    response: knowledgeBaseStatsSchema.extend({ knowledgeBaseId: z.string() }),
    errors: [404],
  })
  @Authenticated({ access: true, rateLimit: 'read' })
  async stats(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id') id: string,
  ): Promise<KnowledgeBaseStats & { knowledgeBaseId: string }> {
    return { knowledgeBaseId: id, ...(await this.collections.stats(caller.tenantId, access, id)) };
  }

  @Get(':id/metadata-values')
  @ApiOperation({
    operationId: 'getKnowledgeBaseMetadataValues',
    summary:
      'Distinct values of a metadata key (or tags) among the documents the caller may read, sorted, with counts',
    parameters: [knowledgeBaseId, ...queryParameters(metadataValuesQuerySchema)],
    response: metadataValuesSchema,
    errors: [404],
  })
  @Authenticated({ access: true, rateLimit: 'read' })
  async metadataValues(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id') id: string,
    @Query() query: unknown,
  ): Promise<MetadataValues> {
    const { field, limit } = parseBody(metadataValuesQuerySchema, query);
    return this.collections.metadataValues(caller.tenantId, access, id, fieldOf(field), limit);
  }

  /** Empties it, keeping its configuration: one job, answered when done. */
  @Delete(':id/documents')
  @ApiOperation({
    operationId: 'emptyKnowledgeBase',
    summary:
      'Empty it, keeping its configuration: one job deleting the documents only it holds and unlinking the others (readable ones). They leave search when it answers; their chunks leave the indexes right after, in batches of 1,000 (indexRemoval: scheduled)',
    parameters: [knowledgeBaseId],
    response: emptyResultSchema,
    errors: [403, 404],
  })
  @Authenticated({ access: true, rateLimit: 'admin' })
  async empty(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id') id: string,
  ): Promise<EmptyResult> {
    return this.collections.empty(caller.tenantId, access, id);
  }

  @Delete(':id')
  @ApiOperation({
    operationId: 'deleteKnowledgeBase',
    summary:
      'Delete a knowledge base: 409 while it holds a document the caller reads, unless cascade=true (deletes those only it holds, unlinks the others)',
    parameters: [knowledgeBaseId, ...queryParameters(deleteQuerySchema.in)],
    response: deleteKnowledgeBaseResultSchema,
    errors: [403, 404, 409],
  })
  @Authenticated({ access: true, rateLimit: 'admin' })
  async delete(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id') id: string,
    @Query() query: unknown,
  ): Promise<DeleteKnowledgeBaseResult> {
    const { cascade } = parseBody(deleteQuerySchema, query);
    return this.collections.delete(caller.tenantId, access, id, cascade);
  }
}
