import { type DocumentFilterNode, FilterError, parseDocumentFilter } from '@kb/contracts';
import { z } from 'zod';

import { label } from '../documents/document-fields';
import { LegalHoldError, LegalHoldErrorCode } from './legal-holds.errors';

/** What a hold covers (docs/adr/0052). */
export const HOLD_SCOPES = ['knowledge_base', 'documents', 'filter'] as const;
export type HoldScope = (typeof HOLD_SCOPES)[number];

/** The most document ids one hold names. */
export const HOLD_DOCUMENT_IDS_MAX = 1000;

/**
 * `POST /v1/holds`: a name (shown in every refusal), a reason, and exactly one subject — a
 * knowledge base, a list of document ids, or a filter of the listing language (`where`, as in
 * `GET /v1/documents?where=`, given as a JSON object).
 */
export const placeHoldSchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    reason: z.string().max(2000).default(''),
    knowledgeBaseId: label.optional(),
    documentIds: z.array(z.uuid()).min(1).max(HOLD_DOCUMENT_IDS_MAX).optional(),
    where: z.record(z.string(), z.unknown()).optional(),
  })
  .strict()
  .refine(
    (h) =>
      [h.knowledgeBaseId, h.documentIds, h.where].filter((subject) => subject !== undefined)
        .length === 1,
    { message: 'give exactly one of knowledgeBaseId, documentIds or where' },
  );
export type PlaceHold = z.infer<typeof placeHoldSchema>;

/** `POST /v1/holds/{id}/release`. */
export const releaseHoldSchema = z.object({ reason: z.string().max(2000).default('') }).strict();

/** `GET /v1/holds?state=`. */
export const holdListQuerySchema = z
  .object({
    state: z.enum(['active', 'released', 'all']).default('active'),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  })
  .strict();
export type HoldListQuery = z.infer<typeof holdListQuerySchema>;

/** A hold as stored; `filter` is the parsed `where` of a filter hold. */
export interface HoldRecord {
  id: string;
  tenantId: string;
  name: string;
  reason: string;
  scope: HoldScope;
  knowledgeBaseId: string | null;
  documentIds: string[];
  where: string | null;
  placedBy: string;
  placedAt: Date;
  releasedBy: string | null;
  releasedAt: Date | null;
  releaseReason: string | null;
}

/** An active hold, ready to be turned into a condition on `documents`. */
export type ActiveHold = Pick<
  HoldRecord,
  'id' | 'name' | 'scope' | 'knowledgeBaseId' | 'documentIds'
> & {
  /** A filter hold's parsed `where`; undefined (`{}`) covers every document. */
  filter?: DocumentFilterNode | undefined;
};

export const holdViewSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  reason: z.string(),
  scope: z.enum(HOLD_SCOPES),
  state: z.enum(['active', 'released']),
  knowledgeBaseId: z.string().optional(),
  documentIds: z.array(z.string()).optional(),
  where: z.record(z.string(), z.unknown()).optional(),
  placedBy: z.string(),
  placedAt: z.string(),
  releasedBy: z.string().optional(),
  releasedAt: z.string().optional(),
  releaseReason: z.string().optional(),
  /** `GET /v1/holds/{id}` only: the documents it holds now. */
  heldDocuments: z.number().int().optional(),
});
export type HoldView = z.infer<typeof holdViewSchema>;

export const holdListSchema = z.object({ items: z.array(holdViewSchema) });

/** Documents a bulk delete left in place because a hold covers them (docs/adr/0052). */
export const heldSkipSchema = z.object({
  count: z.number().int(),
  reason: z.literal('legal_hold'),
  /** The names of the holds that kept them. */
  holds: z.array(z.string()),
});
export type HeldSkip = z.infer<typeof heldSkipSchema>;

/** The skip report of `held` (document id → hold name), or undefined when nothing was held. */
export function heldSkipOf(held: Map<string, string>): HeldSkip | undefined {
  if (held.size === 0) return undefined;
  return { count: held.size, reason: 'legal_hold', holds: [...new Set(held.values())].sort() };
}

export function toHoldView(hold: HoldRecord, heldDocuments?: number): HoldView {
  return {
    id: hold.id,
    name: hold.name,
    reason: hold.reason,
    scope: hold.scope,
    state: hold.releasedAt ? 'released' : 'active',
    ...(hold.knowledgeBaseId !== null ? { knowledgeBaseId: hold.knowledgeBaseId } : {}),
    ...(hold.scope === 'documents' ? { documentIds: hold.documentIds } : {}),
    ...(hold.where !== null ? { where: JSON.parse(hold.where) as Record<string, unknown> } : {}),
    placedBy: hold.placedBy,
    placedAt: hold.placedAt.toISOString(),
    ...(hold.releasedBy !== null ? { releasedBy: hold.releasedBy } : {}),
    ...(hold.releasedAt !== null ? { releasedAt: hold.releasedAt.toISOString() } : {}),
    ...(hold.releaseReason !== null ? { releaseReason: hold.releaseReason } : {}),
    ...(heldDocuments !== undefined ? { heldDocuments } : {}),
  };
}

/**
 * A filter hold's `where`, parsed by the listing language; a bad one is 400 `invalid_filter`.
 * An empty filter (`{}`) covers every document of the tenant.
 */
export function parseHoldFilter(where: unknown): DocumentFilterNode | undefined {
  try {
    return parseDocumentFilter(where);
  } catch (error) {
    if (error instanceof FilterError) {
      throw new LegalHoldError(LegalHoldErrorCode.InvalidFilter, error.message);
    }
    throw error;
  }
}

/** An active hold of a stored row: a filter hold's `where` parsed again. */
export const activeHoldOf = (hold: HoldRecord): ActiveHold => ({
  id: hold.id,
  name: hold.name,
  scope: hold.scope,
  knowledgeBaseId: hold.knowledgeBaseId,
  documentIds: hold.documentIds,
  ...(hold.where !== null ? { filter: parseHoldFilter(JSON.parse(hold.where)) } : {}),
});
