import { toIndexSpace } from '@kb/contracts';
import { TestEmbeddingProvider } from '@kb/embeddings';
import { ErrorKind } from '@kb/errors';
import type { LexicalQuery } from '@kb/lexical-index';
import { collectStageTimings } from '@kb/observability';
import type { VectorQuery } from '@kb/vector-store';

import { newMatch } from '../../test/support/search.fakes';
import { HybridRetrieval, type SpaceToSearch } from './hybrid.retrieval';
import { QueryEmbedder } from './query.embedder';
import { remainingOfDeadline, reserveOf, SearchBudget } from './search.budget';
import { SearchError, SearchErrorCode } from './search.errors';
import { DEFAULT_SEARCH_TUNING, searchRequestSchema } from './search.model';

const own: SpaceToSearch[] = [{ space: toIndexSpace('t1'), model: undefined }];

/** A query that answers only when its signal aborts, with the signal's reason: a locked table. */
function stuck(query: { signal?: AbortSignal | undefined }): Promise<never> {
  return new Promise((_, reject) => {
    query.signal?.addEventListener('abort', () => reject(query.signal!.reason as Error));
  });
}

function retrievalWith(sides: { vectorStuck?: boolean; lexicalStuck?: boolean }) {
  const embedder = new QueryEmbedder(
    { main: new TestEmbeddingProvider(), mainName: 'all-MiniLM-L6-v2', extra: [] },
    null,
  );
  const feedbackSearches: LexicalQuery[] = [];
  const vectors = {
    query: (_: unknown, q: VectorQuery) =>
      sides.vectorStuck ? stuck(q) : Promise.resolve([newMatch(1, 0.9), newMatch(2, 0.8)]),
  };
  const lexical = {
    search: (_: unknown, q: LexicalQuery) => {
      if (q.expansion) feedbackSearches.push(q);
      // As the indexes do: a search whose signal has aborted rejects at once.
      if (q.signal?.aborted) return Promise.reject(q.signal.reason as Error);
      return sides.lexicalStuck ? stuck(q) : Promise.resolve([newMatch(2, 3), newMatch(3, 1)]);
    },
    termVectors: async () => new Map([['d1#1#2', { length: 2, terms: new Map([['x', 2]]) }]]),
  };
  const retrieval = new HybridRetrieval(
    embedder,
    vectors,
    lexical,
    { knowledgeBaseSpaces: async () => own },
    DEFAULT_SEARCH_TUNING,
  );
  return { retrieval, feedbackSearches };
}

async function retrieveWithin(
  timeoutMs: number,
  sides: { vectorStuck?: boolean; lexicalStuck?: boolean },
) {
  const { retrieval, feedbackSearches } = retrievalWith(sides);
  const budget = new SearchBudget(timeoutMs);
  const started = performance.now();
  const result = await retrieval
    .retrieve(
      own,
      searchRequestSchema.parse({ query: 'q', timeoutMs }),
      { signal: budget.retrieval },
      10,
      undefined,
      budget,
    )
    .then(
      (value) => ({ value, error: undefined }),
      (error: unknown) => ({ value: undefined, error }),
    );
  return { ...result, took: performance.now() - started, feedbackSearches };
}

describe('SearchBudget', () => {
  it('keeps a fifth of the budget for after retrieval, at most 100 ms', () => {
    expect(reserveOf(50)).toBe(10);
    expect(reserveOf(5000)).toBe(100);
    // A budget whose fifth is not whole (a gRPC deadline 487 ms away) still makes its signals.
    expect(new SearchBudget(487).retrieval.aborted).toBe(false);
  });

  it('reads a gRPC deadline as the time left, none when the call has no deadline', () => {
    expect(remainingOfDeadline(Infinity)).toBeUndefined();
    expect(remainingOfDeadline(new Date(10_250), 10_000)).toBe(250);
    expect(remainingOfDeadline(9_000, 10_000)).toBe(1);
  });

  it('says an optional step cannot be afforded once the time left before the reserve is short', () => {
    let now = 0;
    const budget = new SearchBudget(200, () => now);
    expect(budget.cannotAfford(50)).toBe(false);
    now = 130; // 70 ms left, 40 of them reserved
    expect(budget.cannotAfford(50)).toBe(true);
    expect(budget.remainingMs()).toBe(70);
  });
});

describe('HybridRetrieval within a budget (docs/adr/0042)', () => {
  it('answers with the lexical hits, marked timed out, when the vector query does not finish in time', async () => {
    const { value, took } = await retrieveWithin(150, { vectorStuck: true });
    expect(value!.degradedReason).toBe('vector_search_timed_out');
    expect(value!.bySpace[0]!.hits.map((h) => h.chunkIndex)).toEqual([2, 3]);
    // The strategies stop at the budget less its reserve (30 ms of 150), not before.
    expect(took).toBeGreaterThanOrEqual(115);
  });

  it('answers with the vector hits, marked timed out, when BM25 does not finish in time', async () => {
    const { value } = await retrieveWithin(100, { lexicalStuck: true });
    expect(value!.degradedReason).toBe('lexical_search_timed_out');
    expect(value!.bySpace[0]!.hits.map((h) => h.chunkIndex)).toEqual([1, 2]);
  });

  it('answers deadline_exceeded (504, DEADLINE_EXCEEDED) when neither strategy finishes in time', async () => {
    const { error } = await retrieveWithin(80, { vectorStuck: true, lexicalStuck: true });
    expect(error).toBeInstanceOf(SearchError);
    expect((error as SearchError).code).toBe(SearchErrorCode.DeadlineExceeded);
    expect((error as SearchError).kind).toBe(ErrorKind.DeadlineExceeded);
  });

  it('skips RM3 feedback when the budget cannot afford it, and says so in the stage timings', async () => {
    const { result, timings } = await collectStageTimings(() => retrieveWithin(60, {}));
    expect(result.value!.degradedReason).toBeUndefined();
    expect(result.feedbackSearches).toEqual([]);
    expect(timings.list().map((t) => t.name)).toContain('feedback_skipped');
    const roomy = await collectStageTimings(() => retrieveWithin(5000, {}));
    expect(roomy.result.feedbackSearches).toHaveLength(1);
    expect(roomy.timings.list().map((t) => t.name)).not.toContain('feedback_skipped');
  });
});
