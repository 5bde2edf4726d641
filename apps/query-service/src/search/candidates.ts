import type { ChunkRef, ChunkText } from '@kb/lexical-index';

import { chunkKey, type SearchHit } from './search.model';

/**
 * What a client sees of a lexical score when BM25 answers alone (`mode: lexical`, or hybrid with
 * vector search down): rounded to two decimals. The statistics behind it already count only the
 * chunks the caller may read; rounding keeps the last digits from serving as a precise probe of
 * them all the same, and says the number is a rank, not raw BM25 (docs/adr/0019).
 */
export const exposedLexicalScore = (score: number): number => Math.round(score * 100) / 100;

/**
 * Told the documents of the first fusion's best hits (as many as the page's window) when RM3's
 * second pass is about to run, so their details can be read meanwhile (`DocumentsPrefetch`).
 */
export type FirstFusionListener = (documentIds: string[]) => void;

/** A chunk as either strategy returns it (`VectorMatch`, `LexicalMatch`), before fusion. */
export type Candidate = Omit<SearchHit, 'strategies' | 'isMatch'>;

/**
 * A retrieved chunk as a hit. The fields are spelled out rather than spread: on Node 20,
 * `{ ...item, score, … }` took V8's slow path (several µs an object), and a hybrid search makes a
 * hit of each of its 150-200 fused candidates (docs/adr/0029, twelfth pass). Node 24 spreads in
 * about 50 ns (ADR 35); the spelled-out form stays, as fast and explicit about the fields.
 */
export function hitOf(
  item: Candidate,
  score: number,
  strategies: SearchHit['strategies'],
): SearchHit {
  return {
    documentId: item.documentId,
    documentVersion: item.documentVersion,
    chunkIndex: item.chunkIndex,
    title: item.title,
    text: item.text,
    startOffset: item.startOffset,
    endOffset: item.endOffset,
    score,
    strategies,
    isMatch: true,
  };
}

/**
 * Candidates that came back without their title and text (a vector query with `withText: false`)
 * completed from `read` (the lexical index, which holds them in memory once read); those that
 * carry their text already (Pinecone keeps it in metadata) are kept as they are. A candidate
 * `read` does not know (its document between the two indexes' writes, or being removed) is left
 * out, as a half-indexed document is. A failure of `read` is the caller's to handle.
 */
export async function withTextsOf(
  found: Candidate[],
  read: (missing: ChunkRef[]) => Promise<Map<string, ChunkText>>,
): Promise<Candidate[]> {
  const missing = found.filter((item) => item.text === '');
  if (missing.length === 0) return found;
  const texts = await read(missing);
  return found.flatMap((item) => {
    if (item.text !== '') return [item];
    const text = texts.get(chunkKey(item));
    if (!text) return [];
    // Spelled out, not spread (see `hitOf`).
    const described: Candidate = {
      documentId: item.documentId,
      documentVersion: item.documentVersion,
      chunkIndex: item.chunkIndex,
      title: text.title,
      text: text.text,
      startOffset: item.startOffset,
      endOffset: item.endOffset,
      score: item.score,
    };
    return [described];
  });
}
