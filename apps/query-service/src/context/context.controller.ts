import { type Access, type Caller, readFilterOf } from '@kb/auth';
import { Authenticated, CurrentAccess, CurrentCaller, parseBody, Public } from '@kb/http';
import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { z } from 'zod';

import { SearchAudit } from '../audit/search-audit.publisher';
import { searchRequestSchema } from '../search/search.model';
import {
  ContextService,
  type RetrieveContextResponse,
  retrieveContextSchema,
} from './context.service';

@Controller('v1')
export class ContextController {
  constructor(
    private readonly context: ContextService,
    private readonly audit: SearchAudit,
  ) {}

  /** `{ question?, messages?, tokenBudget?, candidates?, mode?, knowledgeBaseIds?, filter? }` → passages with citations within the budget. */
  @Post('context')
  @HttpCode(200)
  @Authenticated({ access: true, rateLimit: 'search' })
  async retrieve(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Body() body: unknown,
  ): Promise<RetrieveContextResponse> {
    const request = parseBody(retrieveContextSchema, body);
    const { hits, ...response } = await this.context.retrieve(
      caller.tenantId,
      request,
      readFilterOf(access),
      caller,
    );
    this.audit.record(
      caller.tenantId,
      caller.userId,
      'retrieve_context',
      response.standaloneQuery,
      hits,
    );
    return response;
  }

  /**
   * The `search_knowledge_base` tool in OpenAI function-calling format. Its parameters are the
   * JSON Schema of `POST /v1/search`'s body, generated from the schema that validates it.
   */
  @Public()
  @Get('tools/search_knowledge_base')
  searchTool(): object {
    return searchToolDefinition();
  }
}

export function searchToolDefinition(): object {
  const { $schema: _ignored, ...parameters } = z.toJSONSchema(searchRequestSchema, {
    io: 'input',
    unrepresentable: 'any',
  });
  return {
    type: 'function',
    function: {
      name: 'search_knowledge_base',
      description:
        'Search the knowledge base for passages relevant to a question. Returns chunks with their document id, title, text, character offsets, a relevance score and the strategies that found them.',
      parameters: { ...parameters, additionalProperties: false },
    },
  };
}
