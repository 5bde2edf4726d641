import { newHit } from '../../../test/support/search.fakes';
import type { Reranker } from '../cross-encoder.reranker';
import { DEFAULT_SEARCH_TUNING } from '../search.model';
import { RERANK_PROBE_MS, RerankStep } from './rerank.step';

/** FAKE cross-encoder: scores a passage by how often it says "rigging"; `fail` rejects. */
function fakeReranker(fail = false) {
  const calls: Array<{ query: string; passages: string[] }> = [];
  const reranker: Reranker = {
    model: 'fake-cross-encoder',
    msPerPair: 1,
    score: async (query, passages) => {
      calls.push({ query, passages });
      if (fail) throw new Error('model crashed');
      return passages.map((p) => (p.match(/rigging/g) ?? []).length);
    },
    close: async () => undefined,
  };
  return { reranker, calls };
}

const hits = [
  newHit(0, 0.9, { text: 'hull' }),
  newHit(1, 0.8, { text: 'rigging and more rigging' }),
  newHit(2, 0.7, { text: 'rigging' }),
  newHit(3, 0.6, { text: 'rigging rigging rigging' }),
];
const asked = { query: 'ropes', rerank: true };
// The cross-encoder's order alone (weight 1), so the order shows what the model said.
const tuning = { ...DEFAULT_SEARCH_TUNING, rerankCandidates: 3, rerankFusion: { k: 1, weight: 1 } };

describe('RerankStep', () => {
  it('orders the top candidates by the cross-encoder and keeps the rest after them', async () => {
    const { reranker, calls } = fakeReranker();
    const { hits: reranked, outcome } = await new RerankStep(reranker, tuning).run(hits, asked);
    expect(outcome).toBe('applied');
    expect(reranked.map((h) => [h.chunkIndex, h.score])).toEqual([
      [1, 1 / 2],
      [2, 1 / 3],
      [0, 1 / 4],
      [3, 0.6], // beyond the 3 candidates: not re-scored, kept after them
    ]);
    expect(calls).toEqual([
      { query: 'ropes', passages: ['t\nhull', 't\nrigging and more rigging', 't\nrigging'] },
    ]);
  });

  it('keeps the fused order among equal model scores', async () => {
    const { reranker } = fakeReranker();
    const flat = [newHit(0, 0.9), newHit(1, 0.8), newHit(2, 0.7)];
    const { hits: reranked } = await new RerankStep(reranker, tuning).run(flat, asked);
    expect(reranked.map((h) => h.chunkIndex)).toEqual([0, 1, 2]);
  });

  it('fuses the model order with the first stage order by the configured weight', async () => {
    const { reranker } = fakeReranker();
    const order = async (weight: number) => {
      const fusion = { ...tuning, rerankFusion: { k: 60, weight } };
      const { hits: fused } = await new RerankStep(reranker, fusion).run(hits, asked);
      return fused.map((h) => h.chunkIndex);
    };
    // An equal share lifts the model's favourite one place; a light share keeps the first order.
    expect(await order(0.5)).toEqual([1, 0, 2, 3]);
    expect(await order(0.3)).toEqual([0, 1, 2, 3]);
  });

  it('is off when not asked, without calling the model', async () => {
    const { reranker, calls } = fakeReranker();
    const result = await new RerankStep(reranker, tuning).run(hits, { ...asked, rerank: false });
    expect(result).toEqual({ hits, outcome: 'off' });
    expect(calls).toHaveLength(0);
  });

  it('leaves the order as it was, and says why, without a model or when the model fails', async () => {
    expect(await new RerankStep(null, tuning).run(hits, asked)).toEqual({
      hits,
      outcome: { skipped: 'no_reranker_model' },
    });
    expect(await new RerankStep(fakeReranker(true).reranker, tuning).run(hits, asked)).toEqual({
      hits,
      outcome: { skipped: 'reranker_failed' },
    });
  });

  describe('within its budget', () => {
    /** FAKE cross-encoder whose every pair costs `msPerPair` of (simulated) time. */
    function costly(msPerPair: number, clock: { now: number }) {
      const runs: number[] = [];
      const reranker: Reranker = {
        model: 'fake-cross-encoder',
        msPerPair,
        score: async (_query, passages) => {
          runs.push(passages.length);
          clock.now += msPerPair * passages.length;
          return passages.map(() => 0);
        },
        close: async () => undefined,
      };
      return { reranker, runs };
    }
    const many = Array.from({ length: 12 }, (_, i) => newHit(i, 1 - i / 100));
    const wide = { ...tuning, rerankCandidates: 12 };
    let clock: { now: number };
    beforeEach(() => {
      clock = { now: 0 };
      jest.spyOn(performance, 'now').mockImplementation(() => clock.now);
    });
    afterEach(() => jest.restoreAllMocks());

    it('re-scores as many hits as the budget pays for at the measured cost', async () => {
      const { reranker, runs } = costly(10, clock);
      const step = new RerankStep(reranker, { ...wide, rerankBudgetMs: 70 });
      expect((await step.run(many, asked)).outcome).toBe('applied');
      // 70 ms at 10 ms a pair: 7 pairs, in runs of 4.
      expect(runs).toEqual([4, 3]);
    });

    it("takes the request's budget over the configured one, and the search's spare time over both", async () => {
      const { reranker, runs } = costly(10, clock);
      const step = new RerankStep(reranker, { ...wide, rerankBudgetMs: 1000 });
      await step.run(many, { ...asked, rerankBudgetMs: 30 });
      expect(runs).toEqual([3]);
      runs.length = 0;
      await step.run(many, asked, { spareMs: () => 50 });
      expect(runs).toEqual([4, 1]);
    });

    it('stops before a run that would overrun when the model turns slower than measured', async () => {
      const { reranker, runs } = costly(10, clock);
      let calls = 0;
      const slowing: Reranker = {
        ...reranker,
        score: async (query, passages) => {
          calls += 1;
          // The first run takes five times what was measured (a busy machine).
          if (calls === 1) clock.now += 40 * passages.length;
          return reranker.score(query, passages);
        },
      };
      const step = new RerankStep(slowing, { ...wide, rerankBudgetMs: 120 });
      const { hits: reranked, outcome } = await step.run(many, asked);
      expect(outcome).toBe('applied');
      expect(runs).toEqual([4]);
      // The hits not re-scored keep their places after the re-scored ones.
      expect(reranked.slice(4).map((h) => h.chunkIndex)).toEqual([4, 5, 6, 7, 8, 9, 10, 11]);
    });

    it('skips, and says so, when the budget pays for fewer than two hits', async () => {
      const { reranker, runs } = costly(10, clock);
      const step = new RerankStep(reranker, { ...wide, rerankBudgetMs: 15 });
      expect(await step.run(many, asked)).toEqual({
        hits: many,
        outcome: { skipped: 'rerank_budget_spent' },
      });
      expect(runs).toEqual([]);
    });

    it('runs two pairs anyway once a probe interval has passed without a run, and not again before the next', async () => {
      // An estimate made on a busy machine: 87 ms a pair leaves a 150 ms budget no two pairs.
      const { reranker, runs } = costly(87, clock);
      const step = new RerankStep(reranker, { ...wide, rerankBudgetMs: 150 });
      expect((await step.run(many, asked)).outcome).toEqual({ skipped: 'rerank_budget_spent' });
      clock.now += RERANK_PROBE_MS;
      expect((await step.run(many, asked)).outcome).toBe('applied');
      expect(runs).toEqual([2]);
      clock.now += RERANK_PROBE_MS / 2;
      expect((await step.run(many, asked)).outcome).toEqual({ skipped: 'rerank_budget_spent' });
      expect(runs).toEqual([2]);
    });

    it('does not probe when the search has no time left for two pairs', async () => {
      const { reranker, runs } = costly(87, clock);
      const step = new RerankStep(reranker, { ...wide, rerankBudgetMs: 150 });
      clock.now += RERANK_PROBE_MS;
      const { outcome } = await step.run(many, asked, { spareMs: () => 100 });
      expect(outcome).toEqual({ skipped: 'rerank_budget_spent' });
      expect(runs).toEqual([]);
    });
  });

  it("gives the model each passage's best window for the query", async () => {
    const { reranker, calls } = fakeReranker();
    const filler = Array.from({ length: 300 }, () => 'filler').join(' ');
    const long = newHit(0, 0.9, { text: `${filler} the rigging of ropes ${filler}` });
    const step = new RerankStep(reranker, { ...tuning, rerankMaxTokens: 64 });
    await step.run([long, newHit(1, 0.8)], asked);
    const passage = calls[0]!.passages[0]!;
    expect(passage).toContain('rigging of ropes');
    expect(passage.split(' ').length).toBeLessThan(60);
  });
});
