import { SearchError, SearchErrorCode } from './search.errors';

/**
 * The time a search may take (docs/adr/0042): a gRPC deadline or a REST `timeoutMs`, else
 * `SEARCH_TIMEOUT_MS`. `signal` aborts at the deadline: the search then answers
 * `deadline_exceeded` (504, DEADLINE_EXCEEDED). `retrieval` aborts a little earlier, `reserve`
 * before it, so that a strategy that did finish can still be fused, described and sent, marked
 * degraded, before the deadline; the vector store, PostgreSQL (its statement cancelled) and the
 * wait for the query embedding all stop there.
 */
export class SearchBudget {
  /** Aborts at the deadline. */
  readonly signal: AbortSignal;
  /** Aborts `reserve` ms before the deadline: what the strategies' queries are given. */
  readonly retrieval: AbortSignal;
  private readonly deadline: number;

  constructor(
    readonly timeoutMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.deadline = now() + timeoutMs;
    // `AbortSignal.timeout` takes whole milliseconds only.
    this.signal = AbortSignal.timeout(Math.max(Math.floor(timeoutMs), 1));
    this.retrieval = AbortSignal.timeout(Math.max(Math.floor(timeoutMs - reserveOf(timeoutMs)), 1));
  }

  /** Milliseconds left until the deadline (never below 0). */
  remainingMs(): number {
    return Math.max(0, this.deadline - this.now());
  }

  /** Milliseconds an optional step may still take without eating into the reserve (never below 0). */
  spareMs(): number {
    return this.retrieval.aborted ? 0 : Math.max(0, this.remainingMs() - reserveOf(this.timeoutMs));
  }

  /**
   * Whether an optional step that costs about `costMs` (RM3 feedback, say) would eat into the
   * reserve: it is then skipped, and the skip shows in the stage timings.
   */
  cannotAfford(costMs: number): boolean {
    return this.retrieval.aborted || this.remainingMs() - reserveOf(this.timeoutMs) < costMs;
  }
}

/**
 * Kept after retrieval for fusion, hit details and the answer: a fifth, at most 100 ms. With 25
 * and then 50, a degraded answer to a 400 ms budget still came back after 404 ms in the deadline
 * e2e test (two shared cores, seven services), too close to the 504 at the deadline.
 */
export function reserveOf(timeoutMs: number): number {
  return Math.min(100, timeoutMs / 5);
}

/** The budget of a gRPC call: the time to its deadline, when it has one (`Infinity` otherwise). */
export function remainingOfDeadline(deadline: Date | number, now = Date.now()): number | undefined {
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(at) ? Math.max(1, Math.floor(at - now)) : undefined;
}

/** The answer past a search's deadline: 504 / DEADLINE_EXCEEDED (docs/adr/0042). */
export function deadlineExceeded(budget: Pick<SearchBudget, 'timeoutMs'>): SearchError {
  return new SearchError(
    SearchErrorCode.DeadlineExceeded,
    `the search did not finish within its ${budget.timeoutMs} ms budget`,
  );
}
