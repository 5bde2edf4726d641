/**
 * Weight of the newest run in the moving average: a slower run moves it a fifth of the way, a
 * faster one half (a low estimate costs at most one run of pairs past the budget, the rerank
 * step's early exit stops the rest; a high one skips reranks that would have fit).
 */
const SMOOTHING_UP = 0.2;
const SMOOTHING_DOWN = 0.5;
/** How fast an estimate left unmeasured relaxes toward the lowest cost measured (time constant). */
const RELAX_MS = 10_000;

/**
 * What one (query, passage) pair costs the cross-encoder, in milliseconds, for the rerank budget
 * (docs/adr/0047): a moving average of the runs, waits for the model included, so the depth follows
 * the load. An estimate only moves when reranks run, and a rerank runs only when the estimate lets
 * it: one made high by a burst (or a calibration while the other services were starting) would
 * otherwise skip every rerank from then on. So while no run measures it, the estimate relaxes
 * toward the lowest cost measured, and the next run that fits corrects it.
 */
export class PairCost {
  private average: number;
  private lowest: number;
  private measuredAt: number;

  constructor(
    calibrated: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.average = calibrated;
    this.lowest = calibrated;
    this.measuredAt = now();
  }

  get msPerPair(): number {
    const idle = Math.max(0, this.now() - this.measuredAt);
    return this.lowest + (this.average - this.lowest) * Math.exp(-idle / RELAX_MS);
  }

  /** A run of `pairs` pairs took `ms`. */
  record(pairs: number, ms: number): void {
    if (pairs <= 0) return;
    const perPair = ms / pairs;
    const current = this.msPerPair;
    const weight = perPair < current ? SMOOTHING_DOWN : SMOOTHING_UP;
    this.average = (1 - weight) * current + weight * perPair;
    this.lowest = Math.min(this.lowest, perPair);
    this.measuredAt = this.now();
  }
}
