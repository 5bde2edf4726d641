import { z } from 'zod';

import type { SearchHit } from '../search/search.model';

export const passageSchema = z.object({
  /** 1-based; cite as [n]. */
  citation: z.number().int(),
  documentId: z.string(),
  documentVersion: z.number().int(),
  title: z.string(),
  /** The chunk range merged into this passage, inclusive. */
  firstChunkIndex: z.number().int(),
  lastChunkIndex: z.number().int(),
  /** Character offsets into the document's extracted text. */
  startOffset: z.number().int(),
  endOffset: z.number().int(),
  text: z.string(),
  score: z.number(),
  tokens: z.number().int(),
});
export type Passage = z.infer<typeof passageSchema>;

export const packedContextSchema = z.object({
  passages: z.array(passageSchema),
  tokensUsed: z.number().int(),
  tokenBudget: z.number().int(),
  /** True when a passage was cut to fit the budget. */
  truncated: z.boolean(),
});
export type PackedContext = z.infer<typeof packedContextSchema>;

/**
 * Token estimate for budgeting: ~4 characters per token, OpenAI's rule of thumb for English
 * ("What are tokens and how to count them?", OpenAI Help Center). The orchestrator's model has its
 * own tokenizer, so the estimate rounds up and callers should keep a margin.
 */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

type Draft = Omit<Passage, 'citation' | 'tokens'>;

const whitespace = (length: number): string =>
  length >= 2 ? '\n'.repeat(length) : ' '.repeat(length);

/**
 * Merges hits from the same document version whose chunks are adjacent (consecutive indexes) into
 * one passage. Chunk offsets are exact, so an overlap between neighbours is written once: the
 * next chunk contributes only its text after the previous chunk's end. Between chunks that do not
 * overlap the chunker trimmed only whitespace; it comes back as a blank line (two characters or
 * more) or a space, so the passage keeps the length its offsets say.
 */
export function mergeAdjacent(hits: SearchHit[]): Draft[] {
  const groups = new Map<string, SearchHit[]>();
  for (const hit of hits) {
    const key = `${hit.documentId}#${hit.documentVersion}`;
    groups.set(key, [...(groups.get(key) ?? []), hit]);
  }
  const passages: Draft[] = [];
  for (const group of groups.values()) {
    const sorted = [...new Map(group.map((h) => [h.chunkIndex, h])).values()].sort(
      (a, b) => a.chunkIndex - b.chunkIndex,
    );
    let current: Draft | undefined;
    for (const hit of sorted) {
      if (current && hit.chunkIndex === current.lastChunkIndex + 1) {
        const gap = hit.startOffset - current.endOffset;
        const joined = gap < 0 ? hit.text.slice(-gap) : whitespace(gap) + hit.text;
        current = {
          ...current,
          lastChunkIndex: hit.chunkIndex,
          endOffset: Math.max(current.endOffset, hit.endOffset),
          text: current.text + joined,
          score: Math.max(current.score, hit.score),
        };
      } else {
        if (current) passages.push(current);
        current = {
          documentId: hit.documentId,
          documentVersion: hit.documentVersion,
          title: hit.title,
          firstChunkIndex: hit.chunkIndex,
          lastChunkIndex: hit.chunkIndex,
          startOffset: hit.startOffset,
          endOffset: hit.endOffset,
          text: hit.text,
          score: hit.score,
        };
      }
    }
    if (current) passages.push(current);
  }
  return passages;
}

/**
 * Best passages first, each kept whole while it fits; a passage too large for what is left is
 * skipped for smaller ones. If nothing fits at all, the best passage is cut at a word boundary to
 * the budget (and `truncated` says so). Identical texts (the same content in two documents) are
 * kept once.
 */
export function packContext(hits: SearchHit[], tokenBudget: number): PackedContext {
  const seen = new Set<string>();
  const candidates = mergeAdjacent(hits)
    .sort((a, b) => b.score - a.score)
    .filter((p) => {
      const key = p.text.trim();
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  const passages: Passage[] = [];
  let used = 0;
  for (const candidate of candidates) {
    const tokens = estimateTokens(candidate.text);
    if (used + tokens <= tokenBudget) {
      passages.push({ ...candidate, citation: passages.length + 1, tokens });
      used += tokens;
    }
  }
  const best = candidates[0];
  if (passages.length === 0 && best) {
    const cut = best.text.slice(0, tokenBudget * 4).replace(/\s+\S*$/, '');
    const tokens = estimateTokens(cut);
    return {
      passages: [
        { ...best, text: cut, endOffset: best.startOffset + cut.length, citation: 1, tokens },
      ],
      tokensUsed: tokens,
      tokenBudget,
      truncated: true,
    };
  }
  return { passages, tokensUsed: used, tokenBudget, truncated: false };
}
