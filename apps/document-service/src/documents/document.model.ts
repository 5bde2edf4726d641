import { principal } from '@kb/auth';
import type { DocumentStatus, FailureReason } from '@kb/contracts';
import { z } from 'zod';

const principalName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/,
    'letters, digits, "_", ".", "@" or "-", at most 128',
  );

/** Who may read a document besides its owner: users, groups, roles, or everyone in the tenant. */
export const documentAclSchema = z.object({
  users: z.array(principalName).max(256).default([]),
  groups: z.array(principalName).max(256).default([]),
  roles: z.array(principalName).max(64).default([]),
  /** Everyone in the tenant. */
  tenant: z.boolean().default(false),
});
export type DocumentAcl = z.infer<typeof documentAclSchema>;

/** The principals a document grants read access to: its owner and its ACL's entries. */
export function principalsOf(ownerId: string, acl: DocumentAcl): string[] {
  return [
    ...new Set([
      ...(ownerId ? [principal.user(ownerId)] : []),
      ...acl.users.map(principal.user),
      ...acl.groups.map(principal.group),
      ...acl.roles.map(principal.role),
      ...(acl.tenant ? [principal.tenant] : []),
    ]),
  ].sort();
}

/** A document as the API shows it. */
export interface DocumentView {
  id: string;
  tenantId: string;
  title: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  version: number;
  status: DocumentStatus;
  failure: { reason: FailureReason; detail: string | null } | null;
  chunkCount: number | null;
  metadata: Record<string, unknown>;
  tags: string[];
  /**
   * The knowledge bases the document belongs to: those named for it (`explicitKnowledgeBaseIds`,
   * `default` unless the upload named others) plus those whose tag rule matches its tags.
   */
  knowledgeBaseIds: string[];
  explicitKnowledgeBaseIds: string[];
  /** The uploader; always able to read the document and change its ACL. */
  ownerId: string;
  acl: DocumentAcl;
  /** When each pipeline status was reached for the current version. */
  stageTimes: Partial<Record<DocumentStatus, string>>;
  createdAt: string;
  updatedAt: string;
  /** Set on an upload answered with an existing document of the same content. */
  duplicate?: true;
}

/** What a delete removed here; the indexes drop the document's chunks asynchronously. */
export interface DeleteResult {
  documentId: string;
  /** False when another document still uses the same content. */
  blobDeleted: boolean;
  /** Vectors and lexical rows are removed by indexing-service when it receives the event. */
  indexRemoval: 'scheduled';
}

/** Pipeline order; a status event moves a document forward only, so replays and reordering are harmless. */
export const STATUS_RANK: Record<DocumentStatus, number> = {
  pending: 0,
  parsing: 1,
  embedding: 2,
  indexing: 3,
  indexed: 4,
  failed: 5,
};

export function isFinal(status: DocumentStatus): boolean {
  return status === 'indexed' || status === 'failed';
}
