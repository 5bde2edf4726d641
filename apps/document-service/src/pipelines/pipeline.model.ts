// What documents and knowledge bases share: which pipelines a document goes through, decided by
// its knowledge bases (docs/adr/0012). Neither folder imports the other; both import this one.
import {
  chunkerConfigSchema,
  type PiiMode,
  type Pipeline,
  type PipelineDefaults,
  pipelineOf,
  strictestPiiMode,
} from '@kb/contracts';

/** The knowledge base every tenant has, which uploads join when they name none. */
export const DEFAULT_KNOWLEDGE_BASE = 'default';

/** A knowledge base's tag rule: documents with any of `anyOf` among their tags belong to it. */
export interface TagRule {
  knowledgeBaseId: string;
  anyOf: string[];
}

/** A knowledge base's pipeline as stored: the chunker is validated when it is used. */
export interface PipelineSetting {
  knowledgeBaseId: string;
  chunker: unknown;
  embeddingModel: string;
  /** Absent: `off`. */
  pii?: PiiMode;
}

/**
 * The distinct pipelines (chunker, model) of these knowledge bases, first seen first: a document
 * is chunked and embedded once per pipeline. A knowledge base without a setting (the implicit
 * `default`) uses the deployment's default pipeline (CHUNK_SIZE, CHUNK_OVERLAP, EMBEDDING_MODEL).
 * A pipeline carries the strictest PII setting of its knowledge bases, left out when `off`.
 */
export function distinctPipelines(
  tenantId: string,
  knowledgeBaseIds: string[],
  settings: PipelineSetting[],
  defaults: PipelineDefaults,
): Pipeline[] {
  const byId = new Map(settings.map((setting) => [setting.knowledgeBaseId, setting]));
  const pipelines = new Map<string, Pipeline>();
  for (const id of knowledgeBasesOrDefault(knowledgeBaseIds)) {
    const setting = byId.get(id);
    const chunker = setting ? chunkerConfigSchema.safeParse(setting.chunker) : undefined;
    const pipeline = pipelineOf(
      tenantId,
      chunker?.success ? chunker.data : defaults.chunker,
      setting?.embeddingModel ?? defaults.model,
      defaults,
    );
    const seen = pipelines.get(pipeline.key) ?? pipeline;
    seen.knowledgeBaseIds.push(id);
    const pii = strictestPiiMode([seen.pii, setting?.pii]);
    if (pii !== 'off') seen.pii = pii;
    pipelines.set(pipeline.key, seen);
  }
  return [...pipelines.values()];
}

/** A document in no knowledge base is in `default`. */
export const knowledgeBasesOrDefault = (ids: string[]): string[] =>
  ids.length > 0 ? ids : [DEFAULT_KNOWLEDGE_BASE];
