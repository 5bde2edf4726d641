import type { TenantId } from '@kb/contracts';
import { parseBody, Tenant } from '@kb/http';
import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { MAX_TOP_K, SEARCH_MODES } from '../search/search.model';
import {
  ContextService,
  retrieveContextSchema,
  type RetrieveContextResponse,
} from './context.service';

@Controller('v1')
export class ContextController {
  constructor(private readonly context: ContextService) {}

  /** `{ question, tokenBudget?, candidates?, mode? }` → passages with citations within the budget. */
  @Post('context')
  @HttpCode(200)
  retrieve(@Tenant() tenantId: TenantId, @Body() body: unknown): Promise<RetrieveContextResponse> {
    return this.context.retrieve(tenantId, parseBody(retrieveContextSchema, body));
  }

  /** The `search_knowledge_base` tool in OpenAI function-calling format, matching `POST /v1/search`. */
  @Get('tools/search_knowledge_base')
  searchTool(): object {
    return {
      type: 'function',
      function: {
        name: 'search_knowledge_base',
        description:
          'Search the knowledge base for passages relevant to a question. Returns chunks with their document id, title, text, offsets and a relevance score.',
        parameters: {
          type: 'object',
          properties: {
            query: {
              type: 'string',
              description: 'What to look for, in natural language.',
              minLength: 1,
              maxLength: 4000,
            },
            topK: {
              type: 'integer',
              description: 'How many chunks to return.',
              minimum: 1,
              maximum: MAX_TOP_K,
              default: 10,
            },
            mode: {
              type: 'string',
              enum: [...SEARCH_MODES],
              description:
                'hybrid (default) combines semantic and keyword search; semantic or lexical use one.',
              default: 'hybrid',
            },
          },
          required: ['query'],
          additionalProperties: false,
        },
      },
    };
  }
}
