import type { Caller } from '@kb/auth';
import type { OpenAiModel, OpenAiModelList } from '@kb/contracts';
import { CurrentCaller } from '@kb/http';
import { Body, Controller, Get, HttpCode, Param, Post, UseFilters } from '@nestjs/common';

import type { EmbeddingsResponse } from './openai.model';
import { OpenAiEmbeddingsService } from './openai-embeddings.service';
import { OpenAiExceptionFilter } from './openai-exception.filter';

/**
 * OpenAI's embeddings and models API (ADR 23), for the clients and tools people already have:
 * point an OpenAI SDK's base URL at `<embedding-service>/v1` with a knowledge-base token as the
 * API key. Any tenant's caller may embed: the models are shared and no tenant data is read.
 */
@Controller('v1')
@UseFilters(OpenAiExceptionFilter)
export class OpenAiController {
  constructor(private readonly embeddings: OpenAiEmbeddingsService) {}

  @Post('embeddings')
  @HttpCode(200)
  async embed(@CurrentCaller() caller: Caller, @Body() body: unknown): Promise<EmbeddingsResponse> {
    return this.embeddings.embed(caller.tenantId, this.embeddings.parse(body));
  }

  @Get('models')
  models(): OpenAiModelList {
    return this.embeddings.models();
  }

  @Get('models/:model')
  model(@Param('model') model: string): OpenAiModel {
    return this.embeddings.model(model);
  }
}
