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
    /**
     * `s3`: a cron expression (5 or 6 fields) on which the server syncs the source by itself
     * (docs/adr/0043); absent, only when asked. 400 `invalid_schedule` when it does not parse.
     */
    schedule: z.string().trim().min(1).max(200).optional(),
    /** The IANA time zone the schedule is read in; default UTC. */
    timezone: z.string().min(1).max(100).optional(),
  })
  .strict()
  .refine((s) => s.kind !== 's3' || s.bucket !== undefined, {
    message: 'an s3 source needs a bucket',
    path: ['bucket'],
  })
  .refine((s) => s.schedule === undefined || s.kind === 's3', {
    message: 'a folder source is synced by kb sync, not on a schedule',
    path: ['schedule'],
  })
  .refine((s) => s.timezone === undefined || s.schedule !== undefined, {
    message: 'a timezone needs a schedule',
    path: ['timezone'],
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
  /** The cron expression it syncs on, and its time zone; null: only when asked. */
  schedule: string | null;
  timezone: string | null;
  /** When the schedule next syncs it; null without a schedule. */
  nextSyncAt: string | null;
  /** Every document the source brought has the external id `<externalIdPrefix><path>`. */
  externalIdPrefix: string;
}

export interface SyncView {
  id: string;
  sourceId: string;
  status: 'running' | 'succeeded' | 'failed';
  /** What started it: a caller (`manual`), the source's schedule, or `kb sync` (`client`). */
  trigger: SyncTrigger;
  counts: SyncCounts;
  /** Files that could not be synced, with the error code. */
  failures: Array<{ path: string; reason: string }>;
  startedAt: string;
  finishedAt: string | null;
}

export const SYNC_TRIGGERS = ['manual', 'schedule', 'client'] as const;
export type SyncTrigger = (typeof SYNC_TRIGGERS)[number];

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
  schedule: z.string().nullable(),
  timezone: z.string().nullable(),
  nextSyncAt: z.string().nullable(),
  externalIdPrefix: z.string(),
});

/**
 * What `kb sync --source` reports when it has synced a folder source (ADR 43): its counts and the
 * files that failed; `failed` when the sync as a whole did not run through.
 */
export const clientSyncReportSchema = z
  .object({
    status: z.enum(['succeeded', 'failed']).default('succeeded'),
    counts: syncCountsSchema,
    failures: z
      .array(z.object({ path: z.string().max(2000), reason: z.string().max(200) }))
      .max(10_000)
      .default([]),
  })
  .strict();
export type ClientSyncReport = z.infer<typeof clientSyncReportSchema>;

/** A sync as the API shows it (`SyncView`). */
export const syncViewSchema = z.object({
  id: z.uuid(),
  sourceId: z.uuid(),
  status: z.enum(['running', 'succeeded', 'failed']),
  trigger: z.enum(SYNC_TRIGGERS),
  counts: syncCountsSchema,
  failures: z.array(z.object({ path: z.string(), reason: z.string() })),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
});

// The views are TypeScript interfaces; these lines stop the schemas drifting from them.
const sourceViewMatches: z.input<typeof sourceViewSchema> = {} as SourceView;
const syncViewMatches: z.input<typeof syncViewSchema> = {} as SyncView;
void [sourceViewMatches, syncViewMatches];
