/** Mean per-query difference (b − a) and its standard error, over the same queries. */
export interface PairedDifference {
  mean: number;
  se: number;
}

/** Paired difference of two per-query score lists (same queries, same order). */
export function pairedDifference(a: readonly number[], b: readonly number[]): PairedDifference {
  const n = Math.min(a.length, b.length);
  if (n === 0) return { mean: 0, se: 0 };
  const diffs = Array.from({ length: n }, (_, i) => b[i]! - a[i]!);
  const mean = diffs.reduce((sum, d) => sum + d, 0) / n;
  const variance = n > 1 ? diffs.reduce((sum, d) => sum + (d - mean) ** 2, 0) / (n - 1) : 0;
  return { mean, se: Math.sqrt(variance / n) };
}
