import type { Access, Caller } from '@kb/auth';
import { Authenticated, CurrentAccess, CurrentCaller, parseBody } from '@kb/http';
import { Body, Controller, Get, Param, Patch, Post, Query } from '@nestjs/common';

import {
  createKnowledgeBaseSchema,
  type KnowledgeBaseView,
  updateKnowledgeBaseSchema,
  updateQuerySchema,
} from './knowledge-base.model';
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
