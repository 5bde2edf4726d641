import { type SyncCounts, syncCountsSchema } from '@kb/contracts';
import { z } from 'zod';

import { label } from '../documents/document-fields';

const glob = z.string().min(1).max(500);

/**
 * A source bound to a knowledge base (docs/adr/0026): an S3 bucket and prefix the server syncs,
 * or a folder the `kb sync` CLI syncs from the client (the server only records it).
 */
export const createSourceSchema = z
  .object({
    name: z.string().min(1).max(200),
    knowledgeBaseId: label,
    kind: z.enum(['s3', 'folder']),
    /** `s3`: the bucket on the deployment's S3 server (not the documents bucket). */
    bucket: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name')
      .optional(),
    /** Keys under this prefix; a file's path is its key without it. */
    prefix: z.string().max(1000).default(''),
    /** Globs (minimatch) a path must match; none: every file. */
    include: z.array(glob).max(64).default([]),
    /** Globs a path must not match. */
    exclude: z.array(glob).max(64).default([]),
  })
  .strict()
  .refine((s) => s.kind !== 's3' || s.bucket !== undefined, {
    message: 'an s3 source needs a bucket',
    path: ['bucket'],
  });
export type CreateSource = z.infer<typeof createSourceSchema>;

export interface SourceView {
  id: string;
  name: string;
  knowledgeBaseId: string;
  kind: 's3' | 'folder';
  bucket: string | null;
  prefix: string;
  include: string[];
  exclude: string[];
  createdBy: string;
  createdAt: string;
  /** Every document the source brought has the external id `<externalIdPrefix><path>`. */
  externalIdPrefix: string;
}

export interface SyncView {
  id: string;
  sourceId: string;
  status: 'running' | 'succeeded' | 'failed';
  counts: SyncCounts;
  /** Files that could not be synced, with the error code. */
  failures: Array<{ path: string; reason: string }>;
  startedAt: string;
  finishedAt: string | null;
}

export const externalIdPrefixOf = (sourceId: string): string => `source:${sourceId}/`;

/** A source as the API shows it (`SourceView`), for the OpenAPI document. */
export const sourceViewSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  knowledgeBaseId: z.string(),
  kind: z.enum(['s3', 'folder']),
  bucket: z.string().nullable(),
  prefix: z.string(),
  include: z.array(z.string()),
  exclude: z.array(z.string()),
  createdBy: z.string(),
  createdAt: z.string(),
  externalIdPrefix: z.string(),
});

/** A sync as the API shows it (`SyncView`). */
export const syncViewSchema = z.object({
  id: z.uuid(),
  sourceId: z.uuid(),
  status: z.enum(['running', 'succeeded', 'failed']),
  counts: syncCountsSchema,
  failures: z.array(z.object({ path: z.string(), reason: z.string() })),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
});

// The views are TypeScript interfaces; these lines stop the schemas drifting from them.
const sourceViewMatches: z.input<typeof sourceViewSchema> = {} as SourceView;
const syncViewMatches: z.input<typeof syncViewSchema> = {} as SyncView;
void [sourceViewMatches, syncViewMatches];
