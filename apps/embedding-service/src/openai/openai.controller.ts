import type { Caller, Permission } from '@kb/auth';
import {
  type OpenAiModel,
  type OpenAiModelList,
  openAiModelListSchema,
  openAiModelSchema,
} from '@kb/contracts';
import { ApiOperation, Authenticated, CurrentCaller, pathParameter } from '@kb/http';
import { Body, Controller, Get, HttpCode, Param, Post, UseFilters } from '@nestjs/common';
import { z } from 'zod';

import {
  embeddingsRequestSchema,
  type EmbeddingsResponse,
  embeddingsResponseSchema,
} from './openai.model';
import { OpenAiEmbeddingsService } from './openai-embeddings.service';
import { OpenAiExceptionFilter } from './openai-exception.filter';

/**
 * Embedding on request takes what reading the knowledge base takes: `read` on documents, which
 * every member of a tenant holds by default (acl-service's built-in policy); a token that may
 * not read documents may not run the model either (review N5).
 */
export const EMBEDDINGS_PERMISSION: Permission = { action: 'read', resource: 'documents' };

/**
 * OpenAI's embeddings and models API (ADR 23), for the clients and tools people already have:
 * point an OpenAI SDK's base URL at `<embedding-service>/v1` with a knowledge-base token as the
 * API key. The models are shared and no tenant data is read, but each call runs the model that
 * ingestion needs: `POST /v1/embeddings` needs `read` on documents (403 `permission_denied`),
 * draws on the `model` rate-limit budget (429 `rate_limited`) and waits in its own bounded queue
 * (429 `model_busy`), so API callers cannot starve ingestion (security review N5).
 */
@Controller('v1')
@UseFilters(OpenAiExceptionFilter)
export class OpenAiController {
  constructor(private readonly embeddings: OpenAiEmbeddingsService) {}

  @Post('embeddings')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'createEmbedding',
    summary: 'Embed a text or an array of texts (token ids are refused: token_input_unsupported)',
    body: embeddingsRequestSchema,
    response: embeddingsResponseSchema,
    errors: [403, 404, 429],
  })
  @Authenticated({ permission: EMBEDDINGS_PERMISSION, rateLimit: 'model' })
  async embed(@CurrentCaller() caller: Caller, @Body() body: unknown): Promise<EmbeddingsResponse> {
    return this.embeddings.embed(caller.tenantId, this.embeddings.parse(body));
  }

  @Get('models')
  @ApiOperation({
    operationId: 'listModels',
    summary: 'The embedding models served here',
    response: openAiModelListSchema,
  })
  models(): OpenAiModelList {
    return this.embeddings.models();
  }

  @Get('models/:model')
  @ApiOperation({
    operationId: 'retrieveModel',
    summary: 'One served model (404 model_not_found otherwise)',
    parameters: [pathParameter('model', z.string())],
    response: openAiModelSchema,
    errors: [404],
  })
  model(@Param('model') model: string): OpenAiModel {
    return this.embeddings.model(model);
  }
}
