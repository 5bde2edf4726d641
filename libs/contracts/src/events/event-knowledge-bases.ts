import type { Topic, TopicPayload } from './topics';

/**
 * The knowledge bases the work of an event is in, read from what the contracts carry, for the
 * `knowledge_base` label of the consumers' metrics (docs/adr/0041):
 * - a pipeline's knowledge bases (`kb.document.parsed.v1`, `kb.chunks.embedded.v1`): the work is
 *   for that pipeline's index space;
 * - else the document's (`uploaded`, `attributes_changed`, and events written before the
 *   pipeline carried them);
 * - else the one a batch removal or a collection event names.
 * Undefined when the event names none: status changes, ACL, audit, a single delete.
 */
export function eventKnowledgeBases(
  payload: TopicPayload<Topic>,
): string | readonly string[] | undefined {
  if ('pipeline' in payload && payload.pipeline.knowledgeBaseIds.length > 0) {
    return payload.pipeline.knowledgeBaseIds;
  }
  if ('attributes' in payload) return payload.attributes.knowledgeBaseIds;
  if ('knowledgeBaseId' in payload) return payload.knowledgeBaseId;
  return undefined;
}
