import type { TenantId } from '@kb/contracts';
import { parseBody, Tenant } from '@kb/http';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  ParseUUIDPipe,
  Post,
  Query,
  Res,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import { z } from 'zod';
import type { Response } from 'express';
import type { DeleteResult, DocumentView } from './document.model';
import { DocumentError, DocumentErrorCode } from './documents.errors';
import {
  DocumentsService,
  type DocumentPage,
  type UploadedFile as File,
} from './documents.service';

const uploadFieldsSchema = z.object({
  title: z.string().max(500).optional(),
  metadata: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined || raw === '') return undefined;
      try {
        const value: unknown = JSON.parse(raw);
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
          return value as Record<string, unknown>;
        }
      } catch {
        // reported below
      }
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
      return z.NEVER;
    }),
});

const listQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().optional(),
});

@Controller('v1/documents')
export class DocumentsController {
  constructor(private readonly documents: DocumentsService) {}

  /**
   * Multipart upload: a `file` part, optional `title` and `metadata` (a JSON object) parts.
   * 202 for a new document; 200 with `duplicate: true` and the existing document when the tenant
   * already has this exact content.
   */
  @Post()
  @UseInterceptors(FileInterceptor('file'))
  async upload(
    @Tenant() tenantId: TenantId,
    @UploadedFile() file: File | undefined,
    @Body() body: unknown,
    @Res({ passthrough: true }) response: Response,
  ): Promise<DocumentView> {
    if (!file) {
      throw new DocumentError(DocumentErrorCode.MissingFile, 'multipart part "file" is required');
    }
    const fields = parseBody(uploadFieldsSchema, body ?? {});
    const document = await this.documents.upload(tenantId, file, {
      ...(fields.title !== undefined ? { title: fields.title } : {}),
      ...(fields.metadata !== undefined ? { metadata: fields.metadata } : {}),
    });
    response.status(document.duplicate ? 200 : 202);
    return document;
  }

  @Delete(':id')
  @HttpCode(200)
  delete(
    @Tenant() tenantId: TenantId,
    @Param('id', new ParseUUIDPipe({ version: '4' })) id: string,
  ): Promise<DeleteResult> {
    return this.documents.delete(tenantId, id);
  }

  @Get()
  list(@Tenant() tenantId: TenantId, @Query() query: unknown): Promise<DocumentPage> {
    const { limit, cursor } = parseBody(listQuerySchema, query);
    return this.documents.list(tenantId, limit, cursor);
  }

  @Get(':id')
  get(
    @Tenant() tenantId: TenantId,
    @Param('id', new ParseUUIDPipe({ version: '4' })) id: string,
  ): Promise<DocumentView> {
    return this.documents.get(tenantId, id);
  }
}
