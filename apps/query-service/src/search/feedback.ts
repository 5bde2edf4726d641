import type { QueryExpansion, TermVector } from '@kb/lexical-index';

/**
 * Pseudo-relevance feedback of a hybrid search (docs/adr/0028): `rm3` (the default) re-runs the
 * lexical side with the query expanded from the best fused hits, then fuses again; `none` fuses
 * the first pass only (the behaviour before).
 */
export type FeedbackMethod = 'rm3' | 'none';
export const FEEDBACK_METHODS = ['rm3', 'none'] as const satisfies FeedbackMethod[];

/**
 * RM3's settings: the best `documents` fused hits are the feedback, their `terms` most probable
 * lexemes are added, and the query's own terms keep the share `queryWeight` (λ). Chosen by the
 * worst case over nine collection × model sets (docs/adr/0028), not on one collection.
 */
export const RM3 = { documents: 10, terms: 20, queryWeight: 0.7 } as const;

export interface FeedbackHit {
  /** The hit's first-pass (fused) score. */
  score: number;
  terms: TermVector;
}

/**
 * RM3 (Abdul-Jaleel et al., "UMass at TREC 2004"): the relevance model of the feedback hits,
 * P(w|R) = Σ_d P(d)·tf(w, d)/|d|, P(d) each hit's score shifted above the lowest and normalized
 * to sum 1; the `terms` most probable lexemes, renormalized, get weight (1 − λ)·P(w|R), and the
 * query's own terms share λ. Undefined without feedback (no hit with terms).
 */
export function rm3Expansion(
  hits: FeedbackHit[],
  settings: { terms: number; queryWeight: number } = RM3,
): QueryExpansion | undefined {
  const usable = hits.filter((hit) => hit.terms.length > 0 && hit.terms.terms.size > 0);
  if (usable.length === 0) return undefined;
  const lowest = Math.min(...usable.map((hit) => hit.score));
  const shifted = usable.map((hit) => hit.score - lowest + 1e-6);
  const total = shifted.reduce((sum, x) => sum + x, 0);
  const model = new Map<string, number>();
  usable.forEach((hit, i) => {
    const share = shifted[i]! / total;
    for (const [lexeme, tf] of hit.terms.terms) {
      model.set(lexeme, (model.get(lexeme) ?? 0) + (share * tf) / hit.terms.length);
    }
  });
  const top = [...model]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, settings.terms);
  const mass = top.reduce((sum, [, p]) => sum + p, 0);
  if (mass <= 0) return undefined;
  return {
    queryWeight: settings.queryWeight,
    terms: top.map(([lexeme, p]) => ({
      lexeme,
      weight: ((1 - settings.queryWeight) * p) / mass,
    })),
  };
}
