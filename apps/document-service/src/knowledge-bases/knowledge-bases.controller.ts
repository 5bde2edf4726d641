import type { Access, Caller } from '@kb/auth';
import {
  ApiOperation,
  Authenticated,
  CurrentAccess,
  CurrentCaller,
  parseBody,
  queryParameters,
} from '@kb/http';
import { Body, Controller, Get, Param, Patch, Post, Query } from '@nestjs/common';

import {
  createKnowledgeBaseSchema,
  type KnowledgeBaseView,
  knowledgeBaseViewSchema,
  updateKnowledgeBaseSchema,
  updateQuerySchema,
} from './knowledge-base.model';
import { knowledgeBaseIdParameter } from './knowledge-bases.openapi';
import { KnowledgeBasesService } from './knowledge-bases.service';

/**
 * Creating, reading and changing a tenant's knowledge bases. Listing, stats, emptying and
 * deleting them are `CollectionsController`'s (`collections/`); the documents of one, a page at a
 * time, `KnowledgeBaseDocumentsController`'s in `documents/`.
 */
@Controller('v1/knowledge-bases')
export class KnowledgeBasesController {
  constructor(private readonly knowledgeBases: KnowledgeBasesService) {}

  @Post()
  @ApiOperation({
    operationId: 'createKnowledgeBase',
    summary: 'Create a knowledge base with its chunker, embedding model and tag rule',
    body: createKnowledgeBaseSchema,
    response: knowledgeBaseViewSchema,
    errors: [403, 409, 413],
  })
  @Authenticated({ access: true, rateLimit: 'admin' })
  async create(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Body() body: unknown,
  ): Promise<KnowledgeBaseView> {
    return this.knowledgeBases.create(
      caller.tenantId,
      access,
      parseBody(createKnowledgeBaseSchema, body),
    );
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getKnowledgeBase',
    summary: 'One knowledge base',
    parameters: [knowledgeBaseIdParameter],
    response: knowledgeBaseViewSchema,
    errors: [404],
  })
  @Authenticated({ access: true })
  async get(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<KnowledgeBaseView> {
    return this.knowledgeBases.get(caller.tenantId, id);
  }

  /**
   * Name, description, tag rule and metadata change (`?merge=false` replaces the metadata map;
   * by default it is merged, a null value removing its key); chunker or embedding model changes
   * are 409 `immutable_field`.
   */
  @Patch(':id')
  @ApiOperation({
    operationId: 'updateKnowledgeBase',
    summary:
      'Rename, describe, change the tag rule or the metadata (merged unless merge=false); chunker and model are immutable (409)',
    parameters: [knowledgeBaseIdParameter, ...queryParameters(updateQuerySchema.in)],
    body: updateKnowledgeBaseSchema,
    response: knowledgeBaseViewSchema,
    errors: [403, 404, 409, 413],
  })
  @Authenticated({ access: true, rateLimit: 'admin' })
  async update(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id') id: string,
    @Body() body: unknown,
    @Query() query: unknown,
  ): Promise<KnowledgeBaseView> {
    const { merge } = parseBody(updateQuerySchema, query);
    return this.knowledgeBases.update(
      caller.tenantId,
      access,
      id,
      parseBody(updateKnowledgeBaseSchema, body),
      merge,
    );
  }
}
