import { z } from 'zod';

/** `kb.acl.v1`: a tenant's policy changed; holders of enforcers and principal caches refresh. */
export const policyChangedSchema = z.object({
  version: z.number().int().nonnegative(),
  /** What changed, for logs and audit (e.g. "role_assignment_removed"). */
  change: z.string(),
  /** The principal whose expansion changed, when one did. */
  principal: z.string().optional(),
});
export type PolicyChanged = z.infer<typeof policyChangedSchema>;

/** `kb.audit.v1`: who did what, stored by acl-service and queryable by tenant admins. */
export const auditEventSchema = z.object({
  actor: z.string(),
  action: z.enum([
    'search',
    'retrieve_context',
    'document_acl_changed',
    'policy_changed',
    // document-service (docs/adr/0020): writes in the transaction of the change, reads as served.
    'document_uploaded',
    'document_content_replaced',
    'document_edited',
    'document_deleted',
    'document_read',
    'documents_listed',
    // Legal holds and erasures (docs/adr/0052), in the transaction of the change.
    'legal_hold_placed',
    'legal_hold_released',
    'erasure_requested',
  ]),
  /** The query text of a search, the change of a permission or document edit, a list's scope. */
  detail: z.string().max(4000).default(''),
  documentIds: z.array(z.string()).default([]),
  /** `<document>#<version>#<chunk>` of every chunk returned. */
  chunks: z.array(z.string()).default([]),
  /** The knowledge bases a search, context call or upload was in (usage by knowledge base). */
  knowledgeBaseIds: z.array(z.string()).optional(),
  /** A search or context call whose results the cross-encoder reranked (usage). */
  reranked: z.boolean().optional(),
  at: z.iso.datetime(),
});
export type AuditEvent = z.infer<typeof auditEventSchema>;
