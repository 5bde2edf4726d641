// Which knowledge bases a document belongs to, and what a change of them means for its pipelines.
// Pure: the SQL that finds drifted documents is in documents.repository.ts.
import type { Pipeline } from '@kb/contracts';

import type { TagRule } from '../pipelines/pipeline.model';

/** The knowledge bases whose tag rule matches one of `tags`, in the rules' order. */
export function matchedByRules(rules: TagRule[], tags: string[]): string[] {
  return rules
    .filter((rule) => rule.anyOf.some((tag) => tags.includes(tag)))
    .map((rule) => rule.knowledgeBaseId);
}

/**
 * A document's knowledge bases: the explicit ones first (the first decides how it is chunked),
 * then those whose tag rule matches its tags, each once.
 */
export function membershipOf(explicit: string[], matched: string[]): string[] {
  return [...new Set([...explicit, ...matched])];
}

/**
 * Whether a membership change must send the current version through the pipeline again: when
 * the document now needs a pipeline it was not indexed by (parse and embedding are cached, so
 * only the new pipeline's work is done). Leaving a pipeline needs no re-drive: the
 * `attributes_changed` event names the spaces the document stays in.
 */
export function needsRedrive(before: Pipeline[], after: Pipeline[]): boolean {
  const known = new Set(before.map((pipeline) => pipeline.key));
  return after.some((pipeline) => !known.has(pipeline.key));
}

/** The index spaces a document's chunks live in, one per pipeline. */
export const spacesOf = (pipelines: Pipeline[]): string[] =>
  pipelines.map((pipeline) => pipeline.space);
