import type { PostingList } from './bm25-rank';
import type { QueryExpansion } from './lexical-index';

/** Which chunks a principal set may read, and the statistics BM25 takes over them. */
export interface Readers {
  /** Null: every chunk (no ACL filter). */
  mask: Uint8Array | null;
  n: number;
  avgdl: number;
  /** Each lexeme's df over these chunks, counted once per snapshot (at most DF_CACHED). */
  dfs: Map<string, number>;
}

/** The principal of everyone in a tenant (docs/adr/0008): what they read, every member may. */
export const EVERYONE = 't:*';
/** How many tenant-wide chunks weigh as much as the reference in `blendedIdf`. */
export const PRIOR_CHUNKS = 100;

/**
 * `LEXICAL_IDF=tenant` (docs/adr/0056): the idf over the n chunks everyone in the tenant may read,
 * blended with the reference idf by n/(n + PRIOR_CHUNKS): the reference alone with no such chunk,
 * the tenant's own statistics once it has many.
 */
export function blendedIdf(referenceIdf: number, df: number, n: number): number {
  const share = n / (n + PRIOR_CHUNKS);
  const own = n > 0 ? Math.log(1 + (n - df + 0.5) / (df + 0.5)) : 0;
  return share * own + (1 - share) * referenceIdf;
}

const DF_CACHED = 20_000;

/** The lexeme's df over the readable chunks: a pass over its postings, once per snapshot. */
export function dfOf(readers: Readers, lexeme: string, list: PostingList): number {
  const mask = readers.mask;
  if (!mask) return list.size;
  const known = readers.dfs.get(lexeme);
  if (known !== undefined) return known;
  let df = 0;
  for (let i = 0; i < list.size; i++) df += mask[list.ordinals[i]!]!;
  if (readers.dfs.size >= DF_CACHED) readers.dfs.clear();
  readers.dfs.set(lexeme, df);
  return df;
}

/** Each of the query's own lexemes' weight: 1, or with feedback its share of λ. */
export function ownWeight(lexemes: string[], expansion: QueryExpansion | undefined): number {
  return expansion ? expansion.queryWeight / Math.max(lexemes.length, 1) : 1;
}

/**
 * Each lexeme's weight in a search: 1, or with pseudo-relevance feedback (RM3) λ shared by the
 * query's own lexemes plus each feedback term's weight; and the lexemes only feedback gave.
 */
export function queryWeights(
  lexemes: string[],
  expansion: QueryExpansion | undefined,
): { weights: Map<string, number>; feedback: Set<string> } {
  const weights = new Map<string, number>();
  const own = ownWeight(lexemes, expansion);
  for (const lexeme of lexemes) weights.set(lexeme, own);
  const feedback = new Set<string>();
  for (const term of expansion?.terms ?? []) {
    if (!weights.has(term.lexeme)) feedback.add(term.lexeme);
    weights.set(term.lexeme, (weights.get(term.lexeme) ?? 0) + term.weight);
  }
  return { weights, feedback };
}
