import { parseBody } from '@kb/http';
import { Body, Controller, HttpCode, Post } from '@nestjs/common';

import { rerankRequestSchema, type RerankResponse } from './rerank.model';
import { RerankService } from './rerank.service';

/**
 * `POST /v1/rerank`: any caller with a token (the global guard); it reads no tenant data, only
 * the passages it is sent.
 */
@Controller('v1/rerank')
export class RerankController {
  constructor(private readonly service: RerankService) {}

  @Post()
  @HttpCode(200)
  async rerank(@Body() body: unknown): Promise<RerankResponse> {
    return this.service.rerank(parseBody(rerankRequestSchema, body));
  }
}
