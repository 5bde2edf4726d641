import type { Access, Caller } from '@kb/auth';
import { Authenticated, CurrentAccess, CurrentCaller } from '@kb/http';
import { createKnowledgeBaseMcpServer } from '@kb/mcp';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Body, Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';

import { KnowledgeBaseToolsAdapter } from './knowledge-base-tools.adapter';

const MCP_SERVER_VERSION = '0.1.0';

/**
 * The MCP server over Streamable HTTP, stateless: every POST carries one JSON-RPC message (or a
 * batch) and its bearer token, and gets a fresh server bound to that caller, so every tool
 * answers only what they may read. There are no sessions, so GET (a server-sent event stream)
 * and DELETE (ending a session) answer 405, as the specification says a stateless server does.
 */
@Controller('mcp')
export class McpController {
  constructor(private readonly tools: KnowledgeBaseToolsAdapter) {}

  @Post()
  @Authenticated({ access: true, rateLimit: 'search' })
  async post(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Req() request: Request,
    @Res() response: Response,
    @Body() body: unknown,
  ): Promise<void> {
    const server = createKnowledgeBaseMcpServer(this.tools.portFor(caller, access), {
      version: MCP_SERVER_VERSION,
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  }

  @Get()
  @HttpCode(405)
  streamNotOffered(@Res({ passthrough: true }) response: Response): object {
    return notAllowed(response);
  }

  @Delete()
  @HttpCode(405)
  noSessionToEnd(@Res({ passthrough: true }) response: Response): object {
    return notAllowed(response);
  }
}

function notAllowed(response: Response): object {
  response.setHeader('allow', 'POST');
  return {
    jsonrpc: '2.0',
    error: { code: -32000, message: 'Method not allowed: this server is stateless, POST only.' },
    id: null,
  };
}
