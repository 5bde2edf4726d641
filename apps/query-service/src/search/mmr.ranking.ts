export interface MmrCandidate {
  key: string;
  /** Relevance to the query, any scale: it is min-max normalized first. */
  relevance: number;
  /** The chunk's embedding; a candidate without one counts as similar to nothing. */
  vector?: number[] | undefined;
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * Maximal marginal relevance (Carbonell & Goldstein, SIGIR 1998): picks, one at a time, the
 * candidate maximizing λ·relevance − (1 − λ)·(its highest similarity to those already picked).
 * λ = 1 keeps the relevance order; lower values trade relevance for diversity. Returns the keys
 * of the first `k` picks in order; ties keep the input order.
 */
export function maximalMarginalRelevance(
  candidates: MmrCandidate[],
  lambda: number,
  k: number,
): string[] {
  const scores = candidates.map((c) => c.relevance);
  const min = Math.min(...scores);
  const span = Math.max(...scores) - min;
  const relevance = scores.map((s) => (span > 0 ? (s - min) / span : 1));
  const closest = candidates.map(() => 0);
  const left = new Set(candidates.map((_, i) => i));
  const picked: string[] = [];
  while (picked.length < k && left.size > 0) {
    let best = -1;
    let bestScore = -Infinity;
    for (const i of left) {
      const score = lambda * relevance[i]! - (1 - lambda) * closest[i]!;
      if (score > bestScore) {
        best = i;
        bestScore = score;
      }
    }
    left.delete(best);
    picked.push(candidates[best]!.key);
    const chosen = candidates[best]!.vector;
    if (!chosen) continue;
    for (const i of left) {
      const vector = candidates[i]!.vector;
      if (vector) closest[i] = Math.max(closest[i]!, cosine(chosen, vector));
    }
  }
  return picked;
}
