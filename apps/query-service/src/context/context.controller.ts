import { type Access, type Caller, readFilterOf } from '@kb/auth';
import {
  ApiOperation,
  Authenticated,
  CurrentAccess,
  CurrentCaller,
  parseBody,
  Public,
} from '@kb/http';
import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { z } from 'zod';

import { SearchAudit } from '../audit/search-audit.publisher';
import { searchRequestSchema } from '../search/search.model';
import {
  ContextService,
  type RetrieveContextResponse,
  retrieveContextResponseSchema,
  retrieveContextSchema,
} from './context.service';

/** A tool definition in OpenAI function-calling format. */
const toolSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string(),
    description: z.string(),
    parameters: z.record(z.string(), z.unknown()),
  }),
});

@Controller('v1')
export class ContextController {
  constructor(
    private readonly context: ContextService,
    private readonly audit: SearchAudit,
  ) {}

  /** `{ question?, messages?, tokenBudget?, candidates?, mode?, knowledgeBaseIds?, filter? }` → passages with citations within the budget. */
  @Post('context')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'retrieveContext',
    summary: 'Passages for an LLM prompt, merged, de-duplicated and packed to a token budget',
    body: retrieveContextSchema,
    response: retrieveContextResponseSchema,
    // Over the caller's or the tenant's search budget, with Retry-After (docs/adr/0020).
    errors: [429],
  })
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
      { knowledgeBaseIds: request.knowledgeBaseIds, reranked: response.rerank === 'applied' },
    );
    return response;
  }

  /**
   * The `search_knowledge_base` tool in OpenAI function-calling format. Its parameters are the
   * JSON Schema of `POST /v1/search`'s body, generated from the schema that validates it.
   */
  @Public()
  @Get('tools/search_knowledge_base')
  @ApiOperation({
    operationId: 'searchTool',
    summary: 'The search_knowledge_base tool definition in OpenAI function-calling format',
    response: toolSchema,
    authenticated: false,
  })
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
