import { type Access, type Caller, readFilterOf } from '@kb/auth';
import { ApiOperation, Authenticated, CurrentAccess, CurrentCaller, parseBody } from '@kb/http';
import { collectStageTimings } from '@kb/observability';
import { Body, Controller, Get, HttpCode, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { z } from 'zod';

import { SearchAudit } from '../audit/search-audit.publisher';
import {
  MAX_TOP_K,
  SEARCH_MODES,
  searchRequestSchema,
  type SearchResponse,
  searchResponseSchema,
} from './search.model';
import { SearchService } from './search.service';
import { similarRequestSchema, type SimilarResponse, similarResponseSchema } from './similar.model';
import { SimilarService } from './similar.service';

/** `GET /v1/search`'s query string: q, limit, offset, mode and kb (repeated or comma-separated). */
export function searchQueryOf(query: Record<string, unknown>): Record<string, unknown> {
  const one = (v: unknown): string | undefined => (Array.isArray(v) ? v.at(-1) : v) as string;
  const number = (v: unknown): number | undefined =>
    one(v) === undefined ? undefined : Number(one(v));
  const kb = [query['kb'] ?? []]
    .flat()
    .flatMap((v) => String(v).split(','))
    .filter((v) => v !== '');
  return {
    query: one(query['q']) ?? '',
    topK: number(query['limit']),
    offset: number(query['offset']),
    mode: one(query['mode']),
    knowledgeBaseIds: kb,
  };
}

@Controller('v1/search')
export class SearchController {
  constructor(
    private readonly search: SearchService,
    private readonly similarity: SimilarService,
    private readonly audit: SearchAudit,
  ) {}

  /** Searches the documents the caller may read (all of the tenant's for an admin). */
  @Post()
  @HttpCode(200)
  @ApiOperation({
    operationId: 'search',
    summary: 'Hybrid, semantic or lexical search over chunks, with filters, pagination and MMR',
    body: searchRequestSchema,
    response: searchResponseSchema,
    // Over the caller's or the tenant's search budget, with Retry-After (docs/adr/0020).
    errors: [429],
  })
  @Authenticated({ access: true, rateLimit: 'search' })
  run(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Body() body: unknown,
    @Res({ passthrough: true }) response: Response,
  ): Promise<SearchResponse> {
    return this.execute(caller, access, body, response);
  }

  /** The same search for simple clients: `?q=…&limit=…&offset=…&mode=…&kb=…`. */
  @Get()
  @ApiOperation({
    operationId: 'searchGet',
    summary: 'The same search for simple clients, from the query string',
    parameters: [
      { name: 'q', in: 'query', schema: z.string().min(1), description: 'The query.' },
      {
        name: 'limit',
        in: 'query',
        schema: z.number().int().min(1).max(MAX_TOP_K).optional(),
        description: 'How many hits (topK); default 10.',
      },
      {
        name: 'offset',
        in: 'query',
        schema: z.number().int().min(0).optional(),
        description: 'Hits to skip: the previous page\u2019s nextOffset.',
      },
      {
        name: 'mode',
        in: 'query',
        schema: z.enum(SEARCH_MODES).optional(),
        description: 'hybrid (default), semantic, lexical or auto.',
      },
      {
        name: 'kb',
        in: 'query',
        schema: z.string().optional(),
        description: 'Knowledge base ids, comma-separated or repeated; none means all.',
      },
    ],
    response: searchResponseSchema,
  })
  @Authenticated({ access: true, rateLimit: 'search' })
  get(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Query() query: Record<string, unknown>,
    @Res({ passthrough: true }) response: Response,
  ): Promise<SearchResponse> {
    return this.execute(caller, access, searchQueryOf(query), response);
  }

  /** Chunks or documents similar to a text or to a document (which is left out). */
  @Post('similar')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'searchSimilar',
    summary: 'Chunks or documents similar to a text or to a document (excluded), by their vectors',
    body: similarRequestSchema,
    response: similarResponseSchema,
    errors: [404, 409],
  })
  @Authenticated({ access: true, rateLimit: 'search' })
  async similar(
    @CurrentCaller() caller: Caller,
    @CurrentAccess() access: Access,
    @Body() body: unknown,
  ): Promise<SimilarResponse> {
    const request = parseBody(similarRequestSchema, body);
    const response = await this.similarity.similar(caller, request, readFilterOf(access));
    const asked = request.text ?? `similar to document ${request.documentId}`;
    this.audit.record(caller.tenantId, caller.userId, 'search', asked, response.hits);
    return response;
  }

  private async execute(
    caller: Caller,
    access: Access,
    body: unknown,
    http: Pick<Response, 'setHeader'>,
  ): Promise<SearchResponse> {
    const request = parseBody(searchRequestSchema, body);
    const { result: response, timings } = await collectStageTimings(() =>
      this.search.search(caller.tenantId, request, readFilterOf(access), caller),
    );
    this.audit.record(caller.tenantId, caller.userId, 'search', request.query, response.hits, {
      knowledgeBaseIds: request.knowledgeBaseIds,
      reranked: response.rerank === 'applied',
    });
    // Where the time went, per stage (docs/adr/0029).
    timings.add('total', response.tookMs);
    http.setHeader('Server-Timing', timings.header());
    return response;
  }
}
