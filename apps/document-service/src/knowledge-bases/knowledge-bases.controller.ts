import { AccessResolver, type Caller } from '@kb/auth';
import { accessOf, CurrentCaller, parseBody } from '@kb/http';
import { Body, Controller, Delete, Get, Inject, Param, Patch, Post, Query } from '@nestjs/common';
import { z } from 'zod';
import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { DocumentsService, type DocumentPage } from '../documents/documents.service';
import {
  KnowledgeBases,
  createKnowledgeBaseSchema,
  updateKnowledgeBaseSchema,
  type KnowledgeBaseView,
} from './knowledge-bases';

const pageSchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().optional(),
});

/** REST CRUD of a tenant's knowledge bases, and the documents of one, a page at a time. */
@Controller('v1/knowledge-bases')
export class KnowledgeBasesController {
  constructor(
    private readonly knowledgeBases: KnowledgeBases,
    private readonly documents: DocumentsService,
    private readonly access: AccessResolver,
    @Inject(DOCUMENT_CONFIG) private readonly config: DocumentConfig,
  ) {}

  @Post()
  async create(@CurrentCaller() caller: Caller, @Body() body: unknown): Promise<KnowledgeBaseView> {
    return this.knowledgeBases.create(
      caller.tenantId,
      await accessOf(this.access, caller),
      parseBody(createKnowledgeBaseSchema, body),
      {
        model: this.config.EMBEDDING_MODEL,
        chunker: {
          strategy: 'recursive',
          size: this.config.CHUNK_SIZE,
          overlap: this.config.CHUNK_OVERLAP,
        },
      },
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

  /** The knowledge base's documents the caller may read, newest first. */
  @Get(':id/documents')
  async listDocuments(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Query() query: unknown,
  ): Promise<DocumentPage> {
    const access = await accessOf(this.access, caller);
    await this.knowledgeBases.get(caller.tenantId, id);
    const { limit, cursor } = parseBody(pageSchema, query);
    return this.documents.list(caller.tenantId, access, limit, cursor, id);
  }
}
