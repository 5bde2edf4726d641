import { Public } from '@kb/http';
import { Controller, Get, Inject } from '@nestjs/common';

import type { CachedEmbedder } from '../cache/cached.embedder';
import { EMBEDDER } from '../platform/tokens';

export interface ServedModel {
  /** The name a knowledge base (and a pipeline) uses for it. */
  model: string;
  dimension: number;
}

/**
 * The models this service embeds with, and their dimensions, read by document-service when a
 * knowledge base is created (it stores the dimension and refuses a model not served). In-cluster
 * only and without a token: it lists configuration, no tenant data. `GET /v1/models` is the
 * OpenAI-compatible list for outside clients (openai/openai.controller.ts).
 */
@Public()
@Controller('v1/internal/models')
export class ModelsController {
  constructor(@Inject(EMBEDDER) private readonly embedders: ReadonlyMap<string, CachedEmbedder>) {}

  @Get()
  list(): { items: ServedModel[] } {
    return {
      items: [...this.embedders].map(([model, embedder]) => ({
        model,
        dimension: embedder.provider.dimension,
      })),
    };
  }
}
