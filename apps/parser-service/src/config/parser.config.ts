import {
  baseConfigSchema,
  embeddingConfigSchema,
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
  })
  // The embedding model's tokenizer counts chunk tokens; without its folder, a word estimate.
  .extend(embeddingConfigSchema.pick({ EMBEDDING_MODEL_DIR: true, EMBEDDING_MODEL: true }).shape);

export type ParserConfig = z.infer<typeof parserConfigSchema>;
export const PARSER_CONFIG = Symbol('PARSER_CONFIG');
export const loadParserConfig = (): ParserConfig => loadConfig(parserConfigSchema);
