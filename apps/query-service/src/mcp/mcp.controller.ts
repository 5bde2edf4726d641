import type { Access, Caller } from '@kb/auth';
import { Authenticated, CurrentAccess, CurrentCaller } from '@kb/http';
import { createKnowledgeBaseMcpServer } from '@kb/mcp';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Body, Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';

import { KnowledgeBaseToolsAdapter } from './knowledge-base-tools.adapter';

const MCP_SERVER_VERSION = '0.1.0';

/** The stable code (in the JSON-RPC error's `data`) of a refused batch. */
export const MCP_BATCH_NOT_SUPPORTED = 'mcp_batch_not_supported';

/**
 * The MCP server over Streamable HTTP, stateless: every POST carries one JSON-RPC message and its
 * bearer token, and gets a fresh server bound to that caller, so every tool answers only what
 * they may read. A JSON array (a JSON-RPC batch, removed from MCP in its 2025-06-18 revision) is
 * refused with 400 before the SDK sees it: the POST took one rate-limit point, and the SDK would
 * dispatch every element of it (security review N4). There are no sessions, so GET (a server-sent event stream)
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
    if (Array.isArray(body)) {
      response.status(400).json(batchRefused());
      return;
    }
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

/** JSON-RPC's Invalid Request, with the stable code and what to do instead. */
function batchRefused(): object {
  return {
    jsonrpc: '2.0',
    error: {
      code: -32600,
      message: 'Invalid Request: JSON-RPC batches are not supported; send one message per POST.',
      data: { code: MCP_BATCH_NOT_SUPPORTED },
    },
    id: null,
  };
}

function notAllowed(response: Response): object {
  response.setHeader('allow', 'POST');
  return {
    jsonrpc: '2.0',
    error: { code: -32000, message: 'Method not allowed: this server is stateless, POST only.' },
    id: null,
  };
}
