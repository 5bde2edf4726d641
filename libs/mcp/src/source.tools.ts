import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

import type { KnowledgeBasePort } from './knowledge-base.port';
import { run } from './tool-results';

/**
 * `kb_add_source` and `kb_sync` (docs/adr/0043): an agent binds an S3 bucket and prefix (one an
 * operator granted the tenant) to a knowledge base, optionally on a cron schedule, and syncs it.
 * They call document-service's sources API with the caller's token: the same permission (`write`
 * on documents) and the same refusals as REST.
 */
export function registerSourceTools(server: McpServer, port: KnowledgeBasePort): void {
  const writes = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;

  server.registerTool(
    'kb_add_source',
    {
      title: 'Add a source',
      description:
        'Bind an S3 bucket and prefix (granted to your tenant by an operator) to a knowledge ' +
        'base, optionally synced on a cron schedule. Files under the prefix that match the ' +
        'include globs (and none of the exclude globs) become documents. Returns the source.',
      inputSchema: {
        name: z.string().min(1).max(200).describe('A name for people.'),
        knowledge_base_id: z.string().min(1).max(128).describe('The knowledge base it fills.'),
        bucket: z.string().min(3).max(63).describe('The S3 bucket.'),
        prefix: z.string().max(1000).default('').describe('Keys under this prefix only.'),
        include: z.array(z.string().min(1).max(500)).max(64).optional().describe('Globs.'),
        exclude: z.array(z.string().min(1).max(500)).max(64).optional().describe('Globs.'),
        schedule: z
          .string()
          .min(1)
          .max(200)
          .optional()
          .describe('Cron expression, e.g. "0 3 * * *" for 03:00 daily; omit to sync on demand.'),
        timezone: z.string().min(1).max(100).optional().describe('IANA zone; default UTC.'),
      },
      annotations: writes,
    },
    (args) =>
      run(() =>
        port.createSource({
          name: args.name,
          knowledgeBaseId: args.knowledge_base_id,
          kind: 's3',
          bucket: args.bucket,
          prefix: args.prefix,
          ...(args.include ? { include: args.include } : {}),
          ...(args.exclude ? { exclude: args.exclude } : {}),
          ...(args.schedule ? { schedule: args.schedule } : {}),
          ...(args.timezone ? { timezone: args.timezone } : {}),
        }),
      ),
  );

  server.registerTool(
    'kb_sync',
    {
      title: 'Sync a source',
      description:
        'Start a sync of an S3 source in the background and return it (status running); call ' +
        'again with its sync_id to read its progress: status, counts (added, updated, ' +
        'unchanged, deleted, failed) and failures.',
      inputSchema: {
        source_id: z.uuid().describe('The source, from kb_add_source.'),
        sync_id: z.uuid().optional().describe('A sync this tool started: read its progress.'),
      },
      annotations: writes,
    },
    (args) =>
      run(() =>
        args.sync_id
          ? port.getSourceSync(args.source_id, args.sync_id)
          : port.syncSource(args.source_id),
      ),
  );
}
