import { eventKnowledgeBases, type Topic, type TopicEnvelope } from '@kb/contracts';
import { knowledgeBaseLabel, KnowledgeBaseLabelValue } from '@kb/observability';

/**
 * The `knowledge_base` value of an event's metrics (docs/adr/0041): from the ids its payload
 * carries (`eventKnowledgeBases`), bounded by the process's cap. Undefined, and no label, when
 * the event names none or the label is off.
 */
export function knowledgeBaseOfEvent(envelope: TopicEnvelope<Topic>): string | undefined {
  const ids = eventKnowledgeBases(envelope.payload);
  return ids === undefined ? undefined : knowledgeBaseLabel(ids);
}

/** One value for a batch handled as a whole: the one its events share, else `_multiple`. */
export function knowledgeBaseOfBatch(values: readonly (string | undefined)[]): string | undefined {
  const first = values[0];
  return values.every((value) => value === first) ? first : KnowledgeBaseLabelValue.multiple;
}

/** The labels of the consumer metrics: topic, group and, when known, the knowledge base. */
export function eventLabels(
  topic: string,
  group: string,
  knowledgeBase: string | undefined,
): Record<string, string> {
  return knowledgeBase === undefined
    ? { topic, group }
    : { topic, group, knowledge_base: knowledgeBase };
}

/** How many of `values` are each value: a batch counts each event under its own. */
export function tally<T>(values: readonly T[]): Map<T, number> {
  const counts = new Map<T, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
