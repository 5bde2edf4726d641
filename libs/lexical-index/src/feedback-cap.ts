import type { Term } from './bm25-rank';

/**
 * What pseudo-relevance feedback may add to a search's cost (docs/adr/0056): feedback terms with
 * an idf below `minIdf` (0.5: in about 60 % of the chunks or more, with readable statistics) are dropped,
 * and the rest, by their largest possible share, only while their postings stay within
 * `postingsShare` times the query's own terms' postings, or `minPostings`, whichever is more.
 */
export interface FeedbackCap {
  minIdf: number;
  postingsShare: number;
  minPostings: number;
}

export const FEEDBACK_CAP: FeedbackCap = { minIdf: 0.5, postingsShare: 1, minPostings: 2_000 };

/**
 * The feedback terms a search keeps under `cap` (FeedbackCap), in their given order. The query's
 * own terms are never dropped. Feedback whose postings are `minPostings` or fewer in all costs
 * nothing worth sparing and is kept whole: in a small space a common term may be the only one
 * that bridges to a chunk without the query's words.
 */
export function capFeedback(own: Term[], feedback: Term[], cap: FeedbackCap): Term[] {
  if (feedback.reduce((sum, term) => sum + term.list.size, 0) <= cap.minPostings) return feedback;
  const budget = Math.max(
    cap.minPostings,
    cap.postingsShare * own.reduce((sum, term) => sum + term.list.size, 0),
  );
  const kept = new Set<Term>();
  let spent = 0;
  const byShare = feedback
    .filter((term) => term.idf >= cap.minIdf)
    .sort((x, y) => y.weight * y.idf - x.weight * x.idf);
  for (const term of byShare) {
    if (spent + term.list.size > budget) continue;
    spent += term.list.size;
    kept.add(term);
  }
  return feedback.filter((term) => kept.has(term));
}
