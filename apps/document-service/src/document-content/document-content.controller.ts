import { pipeline } from 'node:stream/promises';

import type { Access, Caller } from '@kb/auth';
import {
  ApiOperation,
  Authenticated,
  CurrentAccess,
  CurrentCaller,
  parseBody,
  pathParameter,
  queryParameters,
} from '@kb/http';
import { Controller, Get, Headers, Param, ParseUUIDPipe, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { z } from 'zod';

import { DocumentContentService, type DocumentText } from './document-content.service';
import { documentTextSchema } from './document-text.model';

export const MAX_TEXT_WINDOW = 200_000;

/** `?offset&limit&version` of `GET /v1/documents/:id/text`, in UTF-16 code units. */
const textQuerySchema = z.object({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(MAX_TEXT_WINDOW).default(20_000),
  version: z.coerce.number().int().min(1).optional(),
});

const documentId = pathParameter('id', z.uuid().describe('The document id.'));

/** `inline; filename*=…` (RFC 6266): any file name, safely encoded. */
const dispositionOf = (filename: string): string =>
  `inline; filename*=UTF-8''${encodeURIComponent(filename)}`;

@Controller('v1/documents')
export class DocumentContentController {
  constructor(private readonly content: DocumentContentService) {}

  /**
   * The original as uploaded, streamed from S3: its content type, `ETag` (the SHA-256),
   * `Content-Length`, and one byte range (`Range`, 206; 416 past the end; `If-Range`). Draws on
   * the `read` budget (review N6) and is audited as `document_read` (L5), like `/text`.
   */
  @Get(':id/content')
  @ApiOperation({
    operationId: 'getDocumentContent',
    summary:
      'The original as uploaded; ETag is the SHA-256; a Range header (bytes=a-b, a-, -n) gives 206, or 416 past the end',
    parameters: [documentId],
    alsoStatuses: [206],
    // The original's own content type, whatever was uploaded.
    responseMediaType: '*/*',
    response: z.string().meta({ format: 'binary' }),
    errors: [404, 416],
  })
  @Authenticated({ access: true, rateLimit: 'read' })
  async original(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', new ParseUUIDPipe({ version: '4' })) id: string,
    @Headers('range') range: string | undefined,
    @Headers('if-range') ifRange: string | undefined,
    @Res() response: Response,
  ): Promise<void> {
    const original = await this.content.original(caller.tenantId, access, id, { range, ifRange });
    response.status(original.status);
    response.setHeader('accept-ranges', 'bytes');
    response.setHeader('etag', original.etag);
    // Uploaded content is served as data, never as a page of this origin.
    response.setHeader('x-content-type-options', 'nosniff');
    response.setHeader('content-security-policy', "sandbox; default-src 'none'");
    if (!original.body) {
      response.setHeader('content-range', `bytes */${original.sizeBytes}`);
      response.end();
      return;
    }
    const { start, end } = original.range ?? { start: 0, end: original.sizeBytes - 1 };
    response.setHeader('content-type', original.contentType);
    response.setHeader('content-length', String(end - start + 1));
    response.setHeader('content-disposition', dispositionOf(original.filename));
    if (original.range) {
      response.setHeader('content-range', `bytes ${start}-${end}/${original.sizeBytes}`);
    }
    // A client that goes away mid-download ends the pipeline; nothing is left to answer then.
    await pipeline(original.body, response).catch(() => response.destroy());
  }

  /**
   * The extracted text of the current version (or `?version`), `?offset&limit` characters of
   * it, with the page and heading maps; offsets are those of search hits and citations.
   */
  @Get(':id/text')
  @ApiOperation({
    operationId: 'getDocumentText',
    summary: 'A window of the extracted text, with its page and heading maps',
    parameters: [documentId, ...queryParameters(textQuerySchema)],
    response: documentTextSchema,
    errors: [404, 409],
  })
  @Authenticated({ access: true, rateLimit: 'read' })
  async text(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Param('id', new ParseUUIDPipe({ version: '4' })) id: string,
    @Query() query: unknown,
  ): Promise<DocumentText> {
    const window = parseBody(textQuerySchema, query);
    return this.content.text(caller.tenantId, access, id, window);
  }
}
