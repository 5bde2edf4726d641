import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';

import { z } from 'zod';

import { type ChunkerConfig, chunkerConfigSchema } from './chunking';
import { pipelineSpace, tenantSpace } from './index-space';
import { piiModeSchema } from './pii';
import { toTenantId } from './tenancy';

/**
 * How a knowledge base turns documents into vectors: its chunker and its embedding model. A
 * document is chunked and embedded once per distinct pipeline among its knowledge bases, and each
 * pipeline's chunks live in an index space of their own (docs/adr/0012).
 */
export const pipelineSchema = z.object({
  /** Short hash of the chunker and the model: equal pipelines, equal keys. */
  key: z.string().regex(/^[a-f0-9]{12}$/),
  chunker: chunkerConfigSchema,
  model: z.string().min(1),
  /** The vector namespace and lexical-index key of this pipeline's chunks. */
  space: z.string().min(1),
  /** The document's knowledge bases that use this pipeline. */
  knowledgeBaseIds: z.array(z.string()).default([]),
  /**
   * The strictest PII setting of those knowledge bases (docs/adr/0051); absent when `off`. The
   * parser applies the strictest over all of a document's pipelines. Not part of `key`.
   */
  pii: piiModeSchema.optional(),
});
export type Pipeline = z.infer<typeof pipelineSchema>;

/** Which pipeline a parsed or embedded event belongs to, and every space its version goes to. */
export const pipelineRefSchema = z.object({
  key: z.string(),
  model: z.string().min(1),
  space: z.string().min(1),
  knowledgeBaseIds: z.array(z.string()).default([]),
  /** The spaces of every pipeline of this document version: it is indexed when all are in. */
  versionSpaces: z.array(z.string().min(1)).min(1),
});
export type PipelineRef = z.infer<typeof pipelineRefSchema>;

export const pipelineKey = (chunker: ChunkerConfig, model: string): string =>
  createHash('sha256')
    .update(JSON.stringify([chunker, model]))
    .digest('hex')
    .slice(0, 12);

/** The deployment's default pipeline: what documents outside any configured knowledge base get. */
export interface PipelineDefaults {
  chunker: ChunkerConfig;
  model: string;
}

/**
 * The pipeline of a chunker and a model in a tenant. The deployment's default pipeline keeps the
 * tenant's own namespace, where every chunk lived before pipelines existed; any other gets
 * `<tenant>~<key>`.
 */
export function pipelineOf(
  tenantId: string,
  chunker: ChunkerConfig,
  model: string,
  defaults: PipelineDefaults,
): Pipeline {
  const key = pipelineKey(chunker, model);
  const isDefault = model === defaults.model && isDeepStrictEqual(chunker, defaults.chunker);
  const tenant = toTenantId(tenantId);
  return {
    key,
    chunker,
    model,
    space: isDefault ? tenantSpace(tenant) : pipelineSpace(tenant, key),
    knowledgeBaseIds: [],
  };
}
