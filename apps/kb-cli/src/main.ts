#!/usr/bin/env node

import { Command } from 'commander';

import { registerAdminCommand } from './admin/admin.command';
import { registerDocsCommand } from './collections/docs.command';
import { registerKbCommand } from './collections/kb.command';
import { registerHoldsCommand } from './holds/holds.command';
import { registerIngestCommand } from './ingest/ingest.command';
import { registerMcpCommand } from './mcp/mcp.command';
import { registerContextCommand } from './search/context.command';
import { registerSearchCommand } from './search/search.command';
import { registerSourcesCommand } from './sources/sources.command';
import { registerStatusCommand } from './status/status.command';
import { registerSyncCommand } from './sync/sync.command';
import { registerTokenCommand } from './token/token.command';
import { registerUsageCommands } from './usage/usage.command';
import { registerWebhooksCommand } from './webhooks/webhooks.command';

const program = new Command('kb').description('Command-line client of the knowledge base.');

for (const register of [
  registerTokenCommand,
  registerSearchCommand,
  registerContextCommand,
  registerIngestCommand,
  registerSyncCommand,
  registerKbCommand,
  registerDocsCommand,
  registerSourcesCommand,
  registerWebhooksCommand,
  registerHoldsCommand,
  registerMcpCommand,
  registerStatusCommand,
  registerUsageCommands,
  registerAdminCommand,
]) {
  register(program);
}

program.parseAsync().catch((error: unknown) => {
  process.stderr.write(`kb: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
