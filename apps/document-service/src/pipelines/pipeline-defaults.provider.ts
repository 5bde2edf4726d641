import type { PipelineDefaults } from '@kb/contracts';
import type { Provider } from '@nestjs/common';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';

/** The deployment's default pipeline, the one source of it in this service. */
export const PIPELINE_DEFAULTS = Symbol('PIPELINE_DEFAULTS');

/**
 * What documents outside any configured knowledge base get, and what a knowledge base created
 * without a chunker or model is created with.
 */
export function pipelineDefaultsOf(
  config: Pick<DocumentConfig, 'CHUNK_SIZE' | 'CHUNK_OVERLAP' | 'EMBEDDING_MODEL'>,
): PipelineDefaults {
  return {
    chunker: { strategy: 'recursive', size: config.CHUNK_SIZE, overlap: config.CHUNK_OVERLAP },
    model: config.EMBEDDING_MODEL,
  };
}

export const pipelineDefaultsProvider: Provider = {
  provide: PIPELINE_DEFAULTS,
  inject: [DOCUMENT_CONFIG],
  useFactory: pipelineDefaultsOf,
};
