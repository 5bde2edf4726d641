import type { TenantId } from '@kb/contracts';
import { parseBody, Tenant } from '@kb/http';
import {
  Body,
  Controller,
  Get,
  HttpCode,
  Param,
  ParseUUIDPipe,
  Post,
  Query,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import { z } from 'zod';
import type { DocumentView } from './document.model';
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

  /** Multipart upload: a `file` part, optional `title` and `metadata` (a JSON object) parts. */
  @Post()
  @HttpCode(202)
  @UseInterceptors(FileInterceptor('file'))
  upload(
    @Tenant() tenantId: TenantId,
    @UploadedFile() file: File | undefined,
    @Body() body: unknown,
  ): Promise<DocumentView> {
    if (!file) {
      throw new DocumentError(DocumentErrorCode.MissingFile, 'multipart part "file" is required');
    }
    const fields = parseBody(uploadFieldsSchema, body ?? {});
    return this.documents.upload(tenantId, file, {
      ...(fields.title !== undefined ? { title: fields.title } : {}),
      ...(fields.metadata !== undefined ? { metadata: fields.metadata } : {}),
    });
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
