import { documentMetadataSchema } from '@kb/contracts';
import { z } from 'zod';

import { DOCUMENT_STATES, documentAclSchema } from './document.model';

/**
 * The API's field names (docs/adr/0025): camelCase everywhere, in JSON bodies, multipart parts
 * and query parameters alike. `knowledge_base_ids`, the one snake_case name the API had, is still
 * accepted until `FIELD_SUNSET`; a request using it is answered with `Deprecation` and `Sunset`.
 */
export const DEPRECATED_FIELDS: Readonly<Record<string, string>> = {
  knowledge_base_ids: 'knowledgeBaseIds',
};
/** RFC 9745: when the old names were deprecated (2026-11-27), as `@<epoch seconds>`. */
export const FIELD_DEPRECATION = '@1795737600';
/** RFC 8594: after this date the old names answer 400 like any unknown field. */
export const FIELD_SUNSET = 'Thu, 27 May 2027 00:00:00 GMT';

/** The deprecated names `body` uses (so the answer can carry `Deprecation`). */
export const deprecatedFieldsIn = (body: unknown): string[] =>
  typeof body === 'object' && body !== null
    ? Object.keys(body).filter((key) => key in DEPRECATED_FIELDS)
    : [];

/**
 * `body` with each deprecated name renamed to its current one. Both names at once is refused by
 * the strict schema afterwards: the old one is kept so the 400 names it.
 */
export function withCurrentNames(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const renamed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const current = DEPRECATED_FIELDS[key];
    if (current && !(current in body)) renamed[current] = value;
    else renamed[key] = value;
  }
  return renamed;
}

/** A multipart text part holding JSON, validated by `schema` once parsed. */
export const jsonPart = <S extends z.ZodType>(schema: S, expected: string) =>
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

export const label = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/,
    'letters, digits, "_", ".", ":" or "-", at most 128',
  );

/** The client's own id of a document: any printable text (a path, a URL, a key), unique per tenant. */
export const externalIdSchema = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^[^\u0000-\u001f\u007f]+$/, 'no control characters');

const knowledgeBaseIds = z.array(label).min(1).max(16);

/** A document's own retention date, ISO 8601 with an offset (docs/adr/0052). */
export const expiresAtSchema = z.iso.datetime({ offset: true });

export const editSchema = z
  .object({
    tags: z.array(label).max(64).optional(),
    metadata: documentMetadataSchema.optional(),
    knowledgeBaseIds: knowledgeBaseIds.optional(),
    /** `inactive`: kept in the indexes, never found by search; `active` brings it back. */
    state: z.enum(DOCUMENT_STATES).optional(),
    /** When retention deletes it (docs/adr/0052); null clears it. */
    expiresAt: expiresAtSchema.nullable().optional(),
  })
  .strict()
  .refine(
    (e) => Object.keys(e).length > 0,
    'name at least one of tags, metadata, knowledgeBaseIds, state, expiresAt',
  );

/**
 * The text parts of a multipart upload beside `file`. Strict: a part the API does not know is a
 * 400 naming it (a misspelled `knowledgeBaseIds` used to land the document in `default`).
 */
export const uploadFieldsSchema = z
  .object({
    title: z.string().max(500).optional(),
    metadata: jsonPart(documentMetadataSchema, 'an object of flat values'),
    tags: jsonPart(z.array(label).max(64), 'an array of strings'),
    knowledgeBaseIds: jsonPart(knowledgeBaseIds, 'a non-empty array of ids'),
    acl: jsonPart(documentAclSchema, 'an object {users, groups, roles, tenant}'),
    externalId: externalIdSchema.optional(),
    expiresAt: expiresAtSchema.optional(),
  })
  .strict();

/** 4 MiB of text: a larger document is a file upload (multipart, streamed). */
export const MAX_JSON_TEXT = 4 * 1024 * 1024;

/** `POST /v1/documents` with a JSON body: the text (or markdown) itself, no file. */
export const jsonUploadSchema = z
  .object({
    text: z.string().min(1).max(MAX_JSON_TEXT).optional(),
    markdown: z.string().min(1).max(MAX_JSON_TEXT).optional(),
    title: z.string().max(500).optional(),
    metadata: documentMetadataSchema.optional(),
    tags: z.array(label).max(64).optional(),
    knowledgeBaseIds: knowledgeBaseIds.optional(),
    acl: documentAclSchema.optional(),
    externalId: externalIdSchema.optional(),
    expiresAt: expiresAtSchema.optional(),
  })
  .strict()
  .refine((b) => (b.text === undefined) !== (b.markdown === undefined), {
    message: 'give exactly one of text, markdown',
    path: ['text'],
  });
export type JsonUpload = z.infer<typeof jsonUploadSchema>;
