import {
  baseConfigSchema,
  embeddingConfigSchema,
  env,
  httpConfigSchema,
  kafkaConfigSchema,
  loadConfig,
  s3ConfigSchema,
} from '@kb/config';
import { z } from 'zod';

export const parserConfigSchema = baseConfigSchema
  .extend(httpConfigSchema(3002).shape)
  .extend(kafkaConfigSchema.shape)
  .extend(s3ConfigSchema.shape)
  .extend({
    KAFKA_GROUP_ID: z.string().default('parser-service'),
    CHUNK_SIZE: env.positiveInt(1000),
    CHUNK_OVERLAP: z.coerce.number().int().min(0).default(150),
  })
  // The embedding model's tokenizer counts chunk tokens; without its folder, a word estimate.
  .extend(embeddingConfigSchema.pick({ EMBEDDING_MODEL_DIR: true, EMBEDDING_MODEL: true }).shape)
  .refine((c) => c.CHUNK_OVERLAP < c.CHUNK_SIZE, {
    message: 'CHUNK_OVERLAP must be smaller than CHUNK_SIZE',
    path: ['CHUNK_OVERLAP'],
  });

export type ParserConfig = z.infer<typeof parserConfigSchema>;
export const PARSER_CONFIG = Symbol('PARSER_CONFIG');
export const loadParserConfig = (): ParserConfig => loadConfig(parserConfigSchema);
