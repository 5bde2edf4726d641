import { AccessResolver, type Caller } from '@kb/auth';
import { accessOf, CurrentCaller, parseBody } from '@kb/http';
import { Body, Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import {
  createKnowledgeBaseSchema,
  updateKnowledgeBaseSchema,
  type KnowledgeBaseView,
} from './knowledge-base.model';
import { KnowledgeBasesService } from './knowledge-bases.service';

/**
 * REST CRUD of a tenant's knowledge bases. The documents of one, a page at a time, are served by
 * `KnowledgeBaseDocumentsController` in `documents/`.
 */
@Controller('v1/knowledge-bases')
export class KnowledgeBasesController {
  constructor(
    private readonly knowledgeBases: KnowledgeBasesService,
    private readonly access: AccessResolver,
  ) {}

  @Post()
  async create(@CurrentCaller() caller: Caller, @Body() body: unknown): Promise<KnowledgeBaseView> {
    return this.knowledgeBases.create(
      caller.tenantId,
      await accessOf(this.access, caller),
      parseBody(createKnowledgeBaseSchema, body),
    );
  }

  @Get()
  async list(@CurrentCaller() caller: Caller): Promise<{ items: KnowledgeBaseView[] }> {
    await accessOf(this.access, caller);
    return { items: await this.knowledgeBases.list(caller.tenantId) };
  }

  @Get(':id')
  async get(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<KnowledgeBaseView> {
    await accessOf(this.access, caller);
    return this.knowledgeBases.get(caller.tenantId, id);
  }

  /** Name and description change; chunker or embedding model changes are 409 `immutable_field`. */
  @Patch(':id')
  async update(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<KnowledgeBaseView> {
    return this.knowledgeBases.update(
      caller.tenantId,
      await accessOf(this.access, caller),
      id,
      parseBody(updateKnowledgeBaseSchema, body),
    );
  }

  @Delete(':id')
  async delete(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<{ id: string }> {
    return this.knowledgeBases.delete(caller.tenantId, await accessOf(this.access, caller), id);
  }
}
