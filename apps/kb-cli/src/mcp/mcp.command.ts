import { createKnowledgeBaseMcpServer, KnowledgeBaseRestClient } from '@kb/mcp';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

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
