import type { Access, Caller, Permission } from '@kb/auth';
import { documentMetadataSchema } from '@kb/contracts';
import { Authenticated, CurrentAccess, CurrentCaller, parseBody } from '@kb/http';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  ParseUUIDPipe,
  Patch,
  Post,
  Put,
  Query,
  Res,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import type { Response } from 'express';
import { z } from 'zod';

import {
  type DeleteResult,
  documentAclSchema,
  type DocumentPage,
  type DocumentView,
} from './document.model';
import { type UploadedFile as File } from './document-content.storage';
import { listQuerySchema, parseWhere } from './document-listing';
import { DocumentReads } from './document-reads.service';
import { DocumentError, DocumentErrorCode } from './documents.errors';
import { DocumentsService } from './documents.service';
import { RemoveSpooledFile } from './remove-spooled-file.interceptor';

/** A multipart text part holding JSON, validated by `schema` once parsed. */
const jsonPart = <S extends z.ZodType>(schema: S, expected: string) =>
  z
    .string()
    .optional()
    .transform((raw, ctx): z.infer<S> | undefined => {
      if (raw === undefined || raw === '') return undefined;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch {
        ctx.addIssue({ code: 'custom', message: `must be ${expected} in JSON` });
        return z.NEVER;
      }
      const parsed = schema.safeParse(value);
      if (parsed.success) return parsed.data;
      for (const issue of parsed.error.issues) {
        ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
      }
      return z.NEVER;
    });

const label = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/,
    'letters, digits, "_", ".", ":" or "-", at most 128',
  );

export const editSchema = z
  .object({
    tags: z.array(label).max(64).optional(),
    metadata: documentMetadataSchema.optional(),
    knowledge_base_ids: z.array(label).min(1).max(16).optional(),
  })
  .strict()
  .refine(
    (e) => Object.keys(e).length > 0,
    'name at least one of tags, metadata, knowledge_base_ids',
  );

export const uploadFieldsSchema = z.object({
  title: z.string().max(500).optional(),
  metadata: jsonPart(documentMetadataSchema, 'an object of flat values'),
  tags: jsonPart(z.array(label).max(64), 'an array of strings'),
  knowledge_base_ids: jsonPart(z.array(label).min(1).max(16), 'a non-empty array of ids'),
  acl: jsonPart(documentAclSchema, 'an object {users, groups, roles, tenant}'),
});

/** A page of documents: `?limit&cursor`. */
export { listQuerySchema } from './document-listing';

/** Uploading or replacing content needs `write` on documents in the caller's tenant. */
const WRITE_DOCUMENTS: Permission = { action: 'write', resource: 'documents' };

@Controller('v1/documents')
export class DocumentsController {
  constructor(
    private readonly documents: DocumentsService,
    private readonly reads: DocumentReads,
  ) {}

  /**
   * Multipart upload: a `file` part; optional `title`, `metadata` (a JSON object of strings,
   * numbers, booleans or string lists), `tags` and `knowledge_base_ids` (JSON arrays) and `acl`
   * (`{users, groups, roles, tenant}`; the owner can always read) parts. Needs `write`.
   * 202 for a new document; 200 with `duplicate: true` and the existing document when the tenant
   * already has this exact content.
   */
  @Post()
  // Checked by the guard, before multer spools the file: a reader cannot fill the disk.
  @Authenticated({ access: true, permission: WRITE_DOCUMENTS, rateLimit: 'upload' })
  @UseInterceptors(RemoveSpooledFile, FileInterceptor('file'))
  async upload(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @UploadedFile() file: File | undefined,
    @Body() body: unknown,
    @Res({ passthrough: true }) response: Response,
  ): Promise<DocumentView> {
    if (!file) {
      throw new DocumentError(DocumentErrorCode.MissingFile, 'multipart part "file" is required');
    }
    const fields = parseBody(uploadFieldsSchema, body ?? {});
    const document = await this.documents.upload(caller.tenantId, access, file, {
      title: fields.title,
      metadata: fields.metadata,
      tags: fields.tags,
      acl: fields.acl,
      knowledgeBaseIds: fields.knowledge_base_ids,
    });
    response.status(document.duplicate ? 200 : 202);
    return document;
  }

  /**
   * New content for a document (multipart `file` part): 202 with the document at its next version,
   * `pending`; search answers from the previous version until the new one is indexed. 200 with
   * `unchanged: true` when the content is the current version's. Needs `write`.
   */
  @Put(':id/content')
  // Checked by the guard, before multer spools the file: a reader cannot fill the disk.
  @Authenticated({ access: true, permission: WRITE_DOCUMENTS, rateLimit: 'upload' })
  @UseInterceptors(RemoveSpooledFile, FileInterceptor('file'))
  async replaceContent(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', new ParseUUIDPipe({ version: '4' })) id: string,
    @UploadedFile() file: File | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<DocumentView> {
    if (!file) {
      throw new DocumentError(DocumentErrorCode.MissingFile, 'multipart part "file" is required');
    }
    const document = await this.documents.replaceContent(caller.tenantId, access, id, file);
    response.status(document.unchanged ? 200 : 202);
    return document;
  }

  @Delete(':id')
  @Authenticated({ access: true })
  @HttpCode(200)
  async delete(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', new ParseUUIDPipe({ version: '4' })) id: string,
  ): Promise<DeleteResult> {
    return this.documents.delete(caller.tenantId, access, id);
  }

  /**
   * Edits `tags`, `metadata` and/or `knowledge_base_ids` (JSON body; absent fields stay). No new
   * version and no re-embedding: the indexes update the chunks in place.
   */
  @Patch(':id')
  @Authenticated({ access: true })
  async edit(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', new ParseUUIDPipe({ version: '4' })) id: string,
    @Body() body: unknown,
  ): Promise<DocumentView> {
    const edit = parseBody(editSchema, body);
    return this.documents.edit(caller.tenantId, access, id, {
      tags: edit.tags && [...new Set(edit.tags)],
      metadata: edit.metadata,
      knowledgeBaseIds: edit.knowledge_base_ids && [...new Set(edit.knowledge_base_ids)],
    });
  }

  /** Replaces the document's ACL (`{users, groups, roles, tenant}`); owner or tenant admin only. */
  @Put(':id/acl')
  @Authenticated({ access: true })
  async setAcl(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', new ParseUUIDPipe({ version: '4' })) id: string,
    @Body() body: unknown,
  ): Promise<DocumentView> {
    const acl = parseBody(documentAclSchema, body);
    return this.documents.setAcl(caller.tenantId, access, id, acl);
  }

  @Get()
  @Authenticated({ access: true })
  async list(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Query() query: unknown,
  ): Promise<DocumentPage> {
    const { limit, cursor, where } = parseBody(listQuerySchema, query);
    return this.reads.list(caller.tenantId, access, limit, cursor, undefined, parseWhere(where));
  }

  @Get(':id')
  @Authenticated({ access: true })
  async get(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', new ParseUUIDPipe({ version: '4' })) id: string,
  ): Promise<DocumentView> {
    return this.reads.get(caller.tenantId, access, id);
  }
}
