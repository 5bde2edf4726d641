import {
  baseConfigSchema,
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
  });

export type ParserConfig = z.infer<typeof parserConfigSchema>;
export const PARSER_CONFIG = Symbol('PARSER_CONFIG');
export const loadParserConfig = (): ParserConfig => loadConfig(parserConfigSchema);
