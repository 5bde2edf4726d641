import type { Access, Caller } from '@kb/auth';
import { Authenticated, CurrentAccess, CurrentCaller, parseBody } from '@kb/http';
import { Body, Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';

import {
  createKnowledgeBaseSchema,
  type KnowledgeBaseView,
  updateKnowledgeBaseSchema,
} from './knowledge-base.model';
import { KnowledgeBasesService } from './knowledge-bases.service';

/**
 * REST CRUD of a tenant's knowledge bases. The documents of one, a page at a time, are served by
 * `KnowledgeBaseDocumentsController` in `documents/`.
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

  @Get()
  @Authenticated({ access: true })
  async list(@CurrentCaller() caller: Caller): Promise<{ items: KnowledgeBaseView[] }> {
    return { items: await this.knowledgeBases.list(caller.tenantId) };
  }

  @Get(':id')
  @Authenticated({ access: true })
  async get(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<KnowledgeBaseView> {
    return this.knowledgeBases.get(caller.tenantId, id);
  }

  /** Name and description change; chunker or embedding model changes are 409 `immutable_field`. */
  @Patch(':id')
  @Authenticated({ access: true, rateLimit: 'admin' })
  async update(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<KnowledgeBaseView> {
    return this.knowledgeBases.update(
      caller.tenantId,
      access,
      id,
      parseBody(updateKnowledgeBaseSchema, body),
    );
  }

  @Delete(':id')
  @Authenticated({ access: true, rateLimit: 'admin' })
  async delete(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id') id: string,
  ): Promise<{ id: string }> {
    return this.knowledgeBases.delete(caller.tenantId, access, id);
  }
}
