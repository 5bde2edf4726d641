import type { FeedbackCap } from './bm25-rank';
import type { LexicalPassMemo } from './lexical-index';
import type { ReferenceStatistics } from './sparse/reference-statistics';

/** How `SpaceSnapshot.rank` weighs terms, beyond plain BM25 over the readable chunks. */
export interface Scoring {
  /**
   * Statistics fixed in advance (`LEXICAL_IDF=reference`, docs/adr/0056): each term's idf and the
   * mean length come from them, and no df is counted. Absent: N, avgdl and df over the chunks the
   * caller may read (docs/adr/0019).
   */
  reference?: ReferenceStatistics | undefined;
  /**
   * With `reference` (`LEXICAL_IDF=tenant`): the statistics of the chunks everyone in the tenant
   * may read (`t:*`) blended in (`blendedIdf`), for callers who are among everyone.
   */
  tenantWide?: boolean | undefined;
  /** The lexemes pseudo-relevance feedback added to the query (not its own), held to `cap`. */
  feedback?: ReadonlySet<string> | undefined;
  cap?: FeedbackCap | null | undefined;
  /**
   * RM3's two passes of one search (docs/adr/0058): the first (without `expansion`) leaves its
   * scores in `memo`; the second, given the own terms' weight (λ shared among them) and each
   * feedback lexeme's weight, starts from them and adds only the feedback's shares. The scores
   * are those of ranking the expanded query in full (sums may differ in the last bit).
   */
  reuse?:
    | {
        memo: LexicalPassMemo;
        expansion?: { ownWeight: number; weights: ReadonlyMap<string, number> } | undefined;
      }
    | undefined;
  /** Score by windows (true) or list by list (false); by default from `WINDOWED_FROM` chunks. */
  windows?: boolean | undefined;
}
