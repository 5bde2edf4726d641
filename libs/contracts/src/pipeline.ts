import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';

import { z } from 'zod';

import { type ChunkerConfig, chunkerConfigSchema } from './chunking';
import { pipelineSpace, tenantSpace } from './index-space';
import { piiModeSchema } from './pii';
import { toTenantId } from './tenancy';

/**
 * How a knowledge base wants its documents read (docs/adr/0050), set at its creation like the
 * chunker: OCR of images and of PDF pages without a text layer, OCR's languages (tesseract
 * codes; none: the parser's OCR_LANGUAGES), and spreadsheet rows as `header (B7): value`
 * records or as plain text lines.
 */
export const parsingSettingsSchema = z
  .object({
    ocr: z.boolean().default(true),
    ocrLanguages: z
      .array(z.string().regex(/^[a-z]{3}(_[a-z]+)?$/, 'a tesseract language code such as eng'))
      .max(8)
      .default([]),
    tableMode: z.enum(['records', 'text']).default('records'),
  })
  .strict();
export type ParsingSettings = z.infer<typeof parsingSettingsSchema>;

/**
 * The one reading of a document in several knowledge bases: its text is extracted once per
 * version (every pipeline's chunks point into it), so their settings combine. OCR runs when any
 * of them wants it, in every language any of them names, and spreadsheets are read as records
 * when any of them wants records (records keep every value and name its column; text mode
 * only drops those names). One without settings counts as the defaults; undefined when none
 * has settings: the parser's defaults.
 */
export function combineParsingSettings(
  settings: Array<ParsingSettings | undefined>,
): ParsingSettings | undefined {
  if (settings.every((setting) => setting === undefined)) return undefined;
  // A knowledge base without settings reads with the defaults.
  const given = settings.map((setting) => setting ?? parsingSettingsSchema.parse({}));
  return {
    ocr: given.some((setting) => setting.ocr),
    ocrLanguages: [...new Set(given.flatMap((setting) => setting.ocrLanguages))],
    tableMode: given.some((setting) => setting.tableMode === 'records') ? 'records' : 'text',
  };
}

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
  /**
   * Their parsing settings combined (`combineParsingSettings`); absent in events written before
   * it existed and for knowledge bases that set none: the parser's defaults.
   */
  parsing: parsingSettingsSchema.optional(),
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
