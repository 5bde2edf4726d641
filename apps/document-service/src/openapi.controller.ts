import { DOCUMENT_STATUSES } from '@kb/contracts';
import { buildOpenApiDocument, Public } from '@kb/http';
import { Controller, Get } from '@nestjs/common';
import { z } from 'zod';

import { textQuerySchema } from './document-content/document-content.controller';

const id = z.uuid().describe('The document id.');
const counts = z.object({
  documents: z.number().int(),
  chunks: z.number().int(),
  byStatus: z.record(
    z.enum(DOCUMENT_STATUSES),
    z.object({ documents: z.number().int(), chunks: z.number().int() }),
  ),
});
const documentTextSchema = z.object({
  documentId: z.uuid(),
  version: z.number().int(),
  title: z.string(),
  contentType: z.string(),
  format: z
    .string()
    .describe('How the parser read it: text, markdown, html, csv, json, code, pdf, docx.'),
  length: z
    .number()
    .int()
    .describe('The whole text, in UTF-16 code units (the unit of hit offsets).'),
  offset: z.number().int(),
  text: z.string(),
  nextOffset: z
    .number()
    .int()
    .nullable()
    .describe('Where the next window starts; null at the end.'),
  pages: z.array(
    z.object({ page: z.number().int(), start: z.number().int(), end: z.number().int() }),
  ),
  headings: z.array(
    z.object({ start: z.number().int(), level: z.number().int(), text: z.string() }),
  ),
});
const statsSchema = z.object({
  scope: z.enum(['readable', 'all']),
  totals: counts,
  knowledgeBases: z.array(counts.extend({ id: z.string(), name: z.string() })),
});

/**
 * The OpenAPI 3 document of document-service's read routes for agents (ADR 21), generated from
 * the schemas that validate their queries.
 */
export const DOCUMENT_OPENAPI = buildOpenApiDocument(
  {
    title: 'Knowledge base documents API (reading)',
    version: '1',
    description:
      'A document\u2019s original and extracted text, and counts per knowledge base. A document the caller may not read is 404.',
  },
  [
    {
      method: 'get',
      path: '/v1/documents/{id}/content',
      operationId: 'getDocumentContent',
      summary:
        'The original as uploaded; ETag is the SHA-256; a Range header (bytes=a-b, a-, -n) gives 206, or 416 past the end',
      parameters: [{ name: 'id', in: 'path', schema: id }],
      status: 200,
      alsoStatuses: [206],
      responseMediaType: 'application/octet-stream',
      response: z.string().meta({ format: 'binary' }),
      errors: [404, 416],
    },
    {
      method: 'get',
      path: '/v1/documents/{id}/text',
      operationId: 'getDocumentText',
      summary: 'A window of the extracted text, with its page and heading maps',
      parameters: [
        { name: 'id', in: 'path', schema: id },
        ...Object.entries(textQuerySchema.shape).map(([name, schema]) => ({
          name,
          in: 'query' as const,
          schema,
        })),
      ],
      status: 200,
      response: documentTextSchema,
      errors: [404, 409],
    },
    {
      method: 'get',
      path: '/v1/stats',
      operationId: 'getStats',
      summary: 'Documents and chunks by status, in total and per knowledge base (readable ones)',
      status: 200,
      response: statsSchema,
    },
  ],
);

@Public()
@Controller()
export class OpenApiController {
  @Get('openapi.json')
  document(): Record<string, unknown> {
    return DOCUMENT_OPENAPI;
  }
}
