import { pathParameter } from '@kb/http';
import { z } from 'zod';

import { jsonPart, label, uploadFieldsSchema } from './document-fields';
import { documentListQuerySchema, listQuerySchema } from './document-listing';

/** The OpenAPI pieces the documents' routes share (their `@ApiOperation`s). */

export const documentIdParameter = pathParameter(
  'id',
  z.uuid({ version: 'v4' }),
  'The document id (a UUID v4).',
);

/** `?limit&cursor&where` of a page of documents. */
export const listParameters = [
  { name: 'limit', in: 'query' as const, schema: listQuerySchema.shape.limit },
  {
    name: 'cursor',
    in: 'query' as const,
    schema: listQuerySchema.shape.cursor,
    description: 'The `nextCursor` of the previous page.',
  },
  {
    name: 'where',
    in: 'query' as const,
    schema: listQuerySchema.shape.where,
    description:
      'A filter as JSON (docs/adr/0007): document_id, tags, status, content_type, created_at, updated_at (ISO 8601 or epoch ms; uploaded_at = created_at) and metadata.<key>, with $eq $ne $in $nin $gt $gte $lt $lte $exists $and $or. A bad filter is 400 invalid_filter.',
  },
];

/** `?externalIdPrefix`: what a sync brought, in external-id order. */
export const externalIdPrefixParameter = {
  name: 'externalIdPrefix',
  in: 'query' as const,
  schema: documentListQuerySchema.shape.externalIdPrefix,
  description:
    "Only documents whose externalId starts with this, in externalId order (byte order), paged by `limit` and `cursor` (this listing's cursors may be up to 4400 characters).",
};

/** An upload's multipart parts; the deprecated snake_case name still works until its Sunset (ADR 25). */
export const uploadMultipart = {
  fields: uploadFieldsSchema.extend({
    knowledge_base_ids: jsonPart(z.array(label).min(1).max(16), 'ids').meta({
      deprecated: true,
      description: 'Deprecated: use knowledgeBaseIds.',
    }),
  }),
  files: ['file'],
  requiredFiles: ['file'],
};
