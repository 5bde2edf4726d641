import {
  chunkerConfigSchema,
  pipelineOf,
  type Pipeline,
  type PipelineDefaults,
} from '@kb/contracts';
import type { Kysely, Transaction } from 'kysely';
import type { DocumentDatabase } from '../platform/db.types';

/** The knowledge base every tenant has, which uploads join when they name none. */
export const DEFAULT_KNOWLEDGE_BASE = 'default';

/**
 * The distinct pipelines (chunker, model) of these knowledge bases, first seen first: a document
 * is chunked and embedded once per pipeline (docs/adr/0012). A knowledge base without a row (the
 * implicit `default`) uses the deployment's default pipeline (CHUNK_SIZE, CHUNK_OVERLAP,
 * EMBEDDING_MODEL).
 */
export async function pipelinesOf(
  db: Kysely<DocumentDatabase> | Transaction<DocumentDatabase>,
  tenantId: string,
  knowledgeBaseIds: string[],
  defaults: PipelineDefaults,
): Promise<Pipeline[]> {
  const ids = knowledgeBaseIds.length > 0 ? knowledgeBaseIds : [DEFAULT_KNOWLEDGE_BASE];
  const rows = await db
    .selectFrom('knowledge_bases')
    .select(['id', 'chunker', 'embedding_model'])
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', ids)
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  const pipelines = new Map<string, Pipeline>();
  for (const id of ids) {
    const row = byId.get(id);
    const chunker = row ? chunkerConfigSchema.safeParse(row.chunker) : undefined;
    const pipeline = pipelineOf(
      tenantId,
      chunker?.success ? chunker.data : defaults.chunker,
      row?.embedding_model ?? defaults.model,
      defaults,
    );
    const seen = pipelines.get(pipeline.key) ?? pipeline;
    seen.knowledgeBaseIds.push(id);
    pipelines.set(pipeline.key, seen);
  }
  return [...pipelines.values()];
}
