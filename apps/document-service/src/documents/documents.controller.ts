import { rm } from 'node:fs/promises';

import type { Access, Caller, Permission } from '@kb/auth';
import {
  ApiOperation,
  Authenticated,
  BodyLimit,
  CurrentAccess,
  CurrentCaller,
  parseBody,
} from '@kb/http';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  ParseUUIDPipe,
  Patch,
  Post,
  Put,
  Query,
  Req,
  Res,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import { z } from 'zod';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { SourcesService } from '../sources/sources.service';
import {
  type DeleteResult,
  deleteResultSchema,
  documentAclSchema,
  type DocumentPage,
  documentPageSchema,
  type DocumentView,
  documentViewSchema,
} from './document.model';
import { spoolText, type UploadedFile as File } from './document-content.storage';
import {
  deprecatedFieldsIn,
  editSchema,
  FIELD_DEPRECATION,
  FIELD_SUNSET,
  type JsonUpload,
  jsonUploadSchema,
  uploadFieldsSchema,
  withCurrentNames,
} from './document-fields';
import { documentListQuerySchema, parseWhere } from './document-listing';
import { DocumentReads } from './document-reads.service';
import { DocumentError, DocumentErrorCode } from './documents.errors';
import {
  documentIdParameter,
  externalIdPrefixParameter,
  listParameters,
  uploadMultipart,
} from './documents.openapi';
import { DocumentsService } from './documents.service';
import { RemoveSpooledFile } from './remove-spooled-file.interceptor';

/**
 * The JSON form of an upload: up to `MAX_JSON_TEXT` (4 Mi) characters of text, up to 3 bytes each
 * in UTF-8, and the fields. Read only after the guard (write permission, upload rate limit).
 */
export const JSON_UPLOAD_BODY_LIMIT = '16mb';
/** An edit's metadata (64 keys, each up to a list of 256 strings) outgrows the 100 kB default. */
export const EDIT_BODY_LIMIT = '1mb';

/** Uploading or replacing content needs `write` on documents in the caller's tenant. */
const WRITE_DOCUMENTS: Permission = { action: 'write', resource: 'documents' };

@Controller('v1/documents')
export class DocumentsController {
  constructor(
    private readonly documents: DocumentsService,
    private readonly reads: DocumentReads,
    private readonly sources: SourcesService,
    @Inject(DOCUMENT_CONFIG) private readonly config: Pick<DocumentConfig, 'UPLOAD_TMP_DIR'>,
  ) {}

  /**
   * Multipart upload: a `file` part; optional `title`, `metadata` (a JSON object of strings,
   * numbers, booleans or string lists), `tags` and `knowledgeBaseIds` (JSON arrays), `acl`
   * (`{users, groups, roles, tenant}`; the owner can always read) and `externalId` parts; any
   * other part is a 400. Or a JSON body (`text` or `markdown`, and the same fields). Needs
   * `write`. 202 for a new document or version; 200 with `duplicate: true` and the existing
   * document when the tenant already has this exact content (without an external id), or with
   * `unchanged: true` when the external id's document already holds it.
   */
  @Post()
  @ApiOperation({
    operationId: 'uploadDocument',
    summary:
      'Upload a document as a file (multipart) or as JSON text (202); the same externalId again is its next version; 200 for the tenant\u2019s copy of the same content',
    multipart: uploadMultipart,
    body: jsonUploadSchema,
    status: 202,
    response: documentViewSchema,
    alsoStatuses: [200],
    errors: [403, 404, 409, 413, 415],
  })
  // Checked by the guard, before multer spools the file: a reader cannot fill the disk.
  @Authenticated({ access: true, permission: WRITE_DOCUMENTS, rateLimit: 'upload' })
  @BodyLimit(JSON_UPLOAD_BODY_LIMIT)
  @UseInterceptors(RemoveSpooledFile, FileInterceptor('file'))
  async upload(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @UploadedFile() file: File | undefined,
    @Body() body: unknown,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<DocumentView> {
    if (!file && request.is('application/json')) {
      const { expiresAt, ...json } = parseBody(jsonUploadSchema, body);
      const document = await this.uploadJson(caller, access, json);
      response.status(document.duplicate || document.unchanged ? 200 : 202);
      return this.documents.expireUpload(caller.tenantId, access, document, expiresAt);
    }
    markDeprecated(response, body);
    const { expiresAt, ...fields } = parseBody(uploadFieldsSchema, withCurrentNames(body ?? {}));
    if (!file) {
      throw new DocumentError(DocumentErrorCode.MissingFile, 'multipart part "file" is required');
    }
    const document = await this.documents.upload(
      caller.tenantId,
      access,
      file,
      fields,
      undefined,
      await this.sources.uploadOptionsFor(caller.tenantId, fields.externalId),
    );
    response.status(document.duplicate || document.unchanged ? 200 : 202);
    return this.documents.expireUpload(caller.tenantId, access, document, expiresAt);
  }

  /** The JSON body's text, spooled like a file, then uploaded as one. */
  private async uploadJson(
    caller: Caller,
    access: Access,
    body: Omit<JsonUpload, 'expiresAt'>,
  ): Promise<DocumentView & { unchanged?: true }> {
    const { text, markdown, ...fields } = body;
    const isMarkdown = markdown !== undefined;
    const base = (fields.title ?? fields.externalId ?? 'document')
      .replace(/[\\/]/g, '_')
      .slice(0, 200);
    const file = await spoolText(
      this.config.UPLOAD_TMP_DIR,
      (isMarkdown ? markdown : text)!,
      `${base}${isMarkdown ? '.md' : '.txt'}`,
      isMarkdown ? 'text/markdown' : 'text/plain',
    );
    try {
      return await this.documents.upload(
        caller.tenantId,
        access,
        file,
        fields,
        undefined,
        await this.sources.uploadOptionsFor(caller.tenantId, fields.externalId),
      );
    } finally {
      await rm(file.path, { force: true });
    }
  }

  /**
   * New content for a document (multipart `file` part): 202 with the document at its next version,
   * `pending`; search answers from the previous version until the new one is indexed. 200 with
   * `unchanged: true` when the content is the current version's. Needs `write`.
   */
  @Put(':id/content')
  @ApiOperation({
    operationId: 'replaceContent',
    summary: 'New content: the next version (202), or 200 `unchanged` for the same bytes',
    parameters: [documentIdParameter],
    multipart: { fields: z.object({}), files: ['file'], requiredFiles: ['file'] },
    status: 202,
    response: documentViewSchema,
    alsoStatuses: [200],
    errors: [403, 404, 413, 415],
  })
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
  @ApiOperation({
    operationId: 'deleteDocument',
    summary:
      'Delete a document; the indexes drop its chunks asynchronously. 409 legal_hold while a legal hold covers it',
    parameters: [documentIdParameter],
    response: deleteResultSchema,
    errors: [403, 404, 409],
  })
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
   * Edits `tags`, `metadata`, `knowledgeBaseIds` and/or `state` (`active` | `inactive`; JSON
   * body; absent fields stay). No new version and no re-embedding: the indexes update the chunks
   * in place; an inactive document's chunks stay indexed but search never finds them.
   */
  @Patch(':id')
  @ApiOperation({
    operationId: 'editDocument',
    summary:
      'Edit tags, metadata, knowledge bases or state (inactive: kept indexed, never found), without a new version',
    parameters: [documentIdParameter],
    body: editSchema,
    response: documentViewSchema,
    errors: [403, 404, 413],
  })
  @Authenticated({ access: true })
  @BodyLimit(EDIT_BODY_LIMIT)
  async edit(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', new ParseUUIDPipe({ version: '4' })) id: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) response: Response,
  ): Promise<DocumentView> {
    markDeprecated(response, body);
    const { expiresAt, ...edit } = parseBody(editSchema, withCurrentNames(body));
    const edited =
      Object.keys(edit).length > 0
        ? await this.documents.edit(caller.tenantId, access, id, {
            tags: edit.tags && [...new Set(edit.tags)],
            metadata: edit.metadata,
            knowledgeBaseIds: edit.knowledgeBaseIds && [...new Set(edit.knowledgeBaseIds)],
            ...(edit.state ? { inactive: edit.state === 'inactive' } : {}),
          })
        : undefined;
    if (expiresAt === undefined) return edited!;
    const when = expiresAt === null ? null : new Date(expiresAt);
    return this.documents.setExpiry(caller.tenantId, access, id, when);
  }

  /** Replaces the document's ACL (`{users, groups, roles, tenant}`); owner or tenant admin only. */
  @Put(':id/acl')
  @ApiOperation({
    operationId: 'setAcl',
    summary: 'Replace who may read the document (owner or tenant admin)',
    parameters: [documentIdParameter],
    body: documentAclSchema,
    response: documentViewSchema,
    errors: [403, 404, 413],
  })
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

  /** A page of documents; reads draw on the `read` budget (review N6) and are audited (L5). */
  @Get()
  @ApiOperation({
    operationId: 'listDocuments',
    summary:
      'The documents the caller may read matching `where`, newest first, a page at a time (limit ≤ 1000, default 100); with externalIdPrefix (and no `where`), those whose external id starts with it (what a sync brought), a page at a time in external-id order',
    parameters: [...listParameters, externalIdPrefixParameter],
    response: documentPageSchema,
  })
  @Authenticated({ access: true, rateLimit: 'read' })
  async list(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Query() query: unknown,
  ): Promise<DocumentPage> {
    const { externalIdPrefix, limit, cursor, where } = parseBody(documentListQuerySchema, query);
    if (externalIdPrefix !== undefined) {
      // What a sync brought (ADR 26): a page at a time, in external-id order.
      return this.reads.listByExternalIdPrefix(
        caller.tenantId,
        access,
        externalIdPrefix,
        limit,
        cursor,
      );
    }
    return this.reads.list(caller.tenantId, access, limit, cursor, undefined, parseWhere(where));
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getDocument',
    summary: 'One document, 404 when it does not exist or the caller may not read it',
    parameters: [documentIdParameter],
    response: documentViewSchema,
    errors: [404],
  })
  @Authenticated({ access: true })
  async get(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', new ParseUUIDPipe({ version: '4' })) id: string,
  ): Promise<DocumentView> {
    return this.reads.get(caller.tenantId, access, id);
  }
}

/** A request naming a deprecated field is answered, and told so (RFC 9745, RFC 8594). */
function markDeprecated(response: Response, body: unknown): void {
  const old = deprecatedFieldsIn(body);
  if (old.length === 0) return;
  response.setHeader('Deprecation', FIELD_DEPRECATION);
  response.setHeader('Sunset', FIELD_SUNSET);
}
