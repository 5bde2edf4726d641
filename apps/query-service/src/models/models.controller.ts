import { OPENAI_MODEL_OWNER, type OpenAiModelList, openAiModelListSchema } from '@kb/contracts';
import { ApiOperation } from '@kb/http';
import { Controller, Get, Inject } from '@nestjs/common';
import { z } from 'zod';

import { RERANKER } from '../platform/tokens';
import {
  type CrossEncoderState,
  crossEncoderStateOf,
  type Reranker,
} from '../search/cross-encoder.reranker';
import { QueryEmbedder } from '../search/query.embedder';

const crossEncoderStateSchema = z.object({
  configured: z.boolean(),
  loaded: z.boolean(),
  model: z.string().nullable(),
});

export type QueryModelList = OpenAiModelList & { cross_encoder: CrossEncoderState };

/**
 * The models query-service runs, in OpenAI's list shape (ADR 23): the embedding models queries
 * are embedded with (the names embedding-service serves) and the cross-encoder, whose state only
 * this process knows; `cross_encoder` tells it even when none is configured. The ingress routes
 * `/v1/models` here, so an OpenAI SDK pointed at the knowledge base lists both kinds.
 */
@Controller('v1/models')
export class ModelsController {
  /** Unix seconds: OpenAI's `created`, here when the service began serving its models. */
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly embedder: QueryEmbedder,
    @Inject(RERANKER) private readonly reranker: Reranker | null,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'listModels',
    summary:
      'The embedding models and the cross-encoder this service runs, in OpenAI\u2019s list shape, with the cross-encoder\u2019s state',
    response: openAiModelListSchema.extend({ cross_encoder: crossEncoderStateSchema }),
  })
  list(): QueryModelList {
    const base = { object: 'model' as const, created: this.created, owned_by: OPENAI_MODEL_OWNER };
    return {
      object: 'list',
      data: [
        ...this.embedder.served().map(({ name, dimension }) => ({
          ...base,
          id: name,
          kind: 'embedding' as const,
          dimension,
        })),
        ...(this.reranker
          ? [{ ...base, id: this.reranker.model, kind: 'cross-encoder' as const }]
          : []),
      ],
      cross_encoder: crossEncoderStateOf(this.reranker),
    };
  }
}
