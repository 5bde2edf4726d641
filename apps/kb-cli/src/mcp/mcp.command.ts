import { createKnowledgeBaseMcpServer, KnowledgeBaseRestClient } from '@kb/mcp';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Command } from 'commander';

export interface McpOptions {
  token: string;
  documentsUrl: string;
  queryUrl: string;
}

/**
 * `kb mcp`: the knowledge base's MCP server on stdin/stdout, for agents that start their tools
 * as processes. Every tool calls the public REST APIs with the caller's token, so the APIs apply
 * that caller's tenant and ACLs, exactly as for `POST /mcp` on query-service. stdout carries the
 * protocol only; anything else goes to stderr.
 */
export async function runMcpServer(options: McpOptions): Promise<void> {
  const client = new KnowledgeBaseRestClient({
    ...options,
    // stdout carries the protocol: the detail of an unreachable API goes to stderr.
    logFailure: (detail) => process.stderr.write(`kb mcp: ${detail}\n`),
  });
  const server = createKnowledgeBaseMcpServer(client, {
    version: '0.1.0',
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await server.connect(transport);
  // The client ends the session by closing our stdin.
  process.stdin.on('end', () => void server.close());
  await closed;
}

/** `kb mcp`: the MCP server on stdio. */
export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description(
      'Serve the knowledge base to an MCP client on stdio (tools kb_search, kb_context, kb_get_document, kb_list_documents, kb_list_knowledge_bases, kb_stats), as the caller of KB_TOKEN.',
    )
    .option('--token <jwt>', 'bearer token (default: KB_TOKEN)', process.env['KB_TOKEN'])
    .option(
      '--documents-url <url>',
      'document-service base URL',
      process.env['KB_DOCUMENTS_URL'] ?? 'http://127.0.0.1:3001',
    )
    .option(
      '--query-url <url>',
      'query-service base URL',
      process.env['KB_QUERY_URL'] ?? 'http://127.0.0.1:3005',
    )
    .action(async (options: { token?: string; documentsUrl: string; queryUrl: string }) => {
      if (!options.token)
        throw new Error('a token is required: --token or KB_TOKEN (see kb token)');
      await runMcpServer({
        token: options.token,
        documentsUrl: options.documentsUrl,
        queryUrl: options.queryUrl,
      });
    });
}
