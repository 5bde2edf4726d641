import { performance } from 'node:perf_hooks';

import {
  FEEDBACK_CAP,
  type LexicalPassMemo,
  type PostingList,
  postingList,
  type ReferenceStatistics,
  type Scoring,
  type SpaceChunk,
  SpaceSnapshot,
} from '@kb/lexical-index';

import { percentile } from './latency';

export interface LexicalBenchOptions {
  /** Chunks in the space, one snapshot each (default 100,000 and 1,000,000). */
  sizes: number[];
  /** Timed searches per query shape and reader set, after one untimed. */
  rounds: number;
}

/** A CISI-like chunk: this many lexeme occurrences, drawn from a Zipf vocabulary of this size. */
const LEXEMES_PER_CHUNK = 60;
const VOCABULARY = 50_000;
/** Query shapes: a first pass (five terms), and RM3's (the five plus twenty feedback terms). */
const QUERY_TERMS = [12, 150, 900, 4_000, 20_000];
const FEEDBACK_TERMS = [
  0, 1, 2, 4, 7, 11, 18, 29, 47, 76, 123, 199, 322, 521, 843, 1364, 2207, 3571, 5778, 9349,
];

/** p50 and p95 of sorted-or-not samples, in ms to two decimals. */
function figures(postings: number, samples: number[]) {
  samples.sort((a, b) => a - b);
  return {
    postings,
    p50_ms: Math.round(percentile(samples, 50) * 100) / 100,
    p95_ms: Math.round(percentile(samples, 95) * 100) / 100,
  };
}

/** Deterministic noise (a linear congruential generator), so runs compare. */
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

/** Every lexeme's postings over `size` chunks, rank r drawn with probability ∝ 1/r (Zipf, s = 1). */
function postings(size: number, next: () => number): Map<string, PostingList> {
  const harmonic = Math.log(VOCABULARY) + 0.5772;
  const ordinals: number[][] = Array.from({ length: VOCABULARY }, () => []);
  const tfs: number[][] = Array.from({ length: VOCABULARY }, () => []);
  for (let o = 0; o < size; o++) {
    for (let j = 0; j < LEXEMES_PER_CHUNK; j++) {
      const rank = Math.min(VOCABULARY - 1, Math.floor(Math.exp(next() * harmonic - 0.5772)));
      const list = ordinals[rank]!;
      if (list[list.length - 1] === o) tfs[rank]![list.length - 1]!++;
      else {
        list.push(o);
        tfs[rank]!.push(1);
      }
    }
  }
  return new Map(
    ordinals.map((list, rank) => [`w${rank}`, postingList({ ordinals: list, tfs: tfs[rank]! })]),
  );
}

/**
 * Fixed statistics for the synthetic vocabulary (`LEXICAL_IDF=reference`, docs/adr/0056): each
 * lexeme's idf from its expected df under the Zipf draw, in a reference collection of 100,000.
 */
function zipfReference(): ReferenceStatistics {
  const harmonic = Math.log(VOCABULARY) + 0.5772;
  const n = 100_000;
  return {
    avgdl: LEXEMES_PER_CHUNK,
    idf(lexeme) {
      const rank = Number(lexeme.slice(1));
      // P(rank) of the draw in `postings`: the share of [0, 1) that floors to this rank.
      const share = (rank === 0 ? 0.5772 : Math.log(rank + 1) - Math.log(rank)) / harmonic;
      const df = n * -Math.expm1(-share * LEXEMES_PER_CHUNK);
      return Math.log(1 + (n - df + 0.5) / (df + 0.5));
    },
  };
}

/** A rank drawn as the postings are (Zipf), past the `skip` most common. */
function zipfRank(next: () => number, skip: number): number {
  const harmonic = Math.log(VOCABULARY) + 0.5772;
  return Math.min(VOCABULARY - 1, Math.floor(Math.exp(next() * harmonic - 0.5772)) + skip);
}

/**
 * Long queries, as CISI's are (30 lexemes, Zipf-drawn past the 10 most common), top 100, RM3
 * capped with 20 Zipf-drawn feedback terms, readable statistics: the first pass, RM3 ranked in
 * full, and the two passes with RM3 reusing the first (docs/adr/0058). A new query each round.
 */
function longQueries(snapshot: SpaceSnapshot, lists: Map<string, PostingList>, rounds: number) {
  const next = random(12_345);
  const timings: Record<string, unknown> = {};
  for (const [reader, principals] of Object.entries({ everything: null, a_third: ['u:reader'] })) {
    const query = { ...(principals ? { principals } : {}), topK: 100 };
    const samples = {
      first: [] as number[],
      full: [] as number[],
      keeping: [] as number[],
      windowsFirst: [] as number[],
      windowsFull: [] as number[],
      windowsSeeded: [] as number[],
    };
    const reusing: number[] = [];
    let postings = 0;
    for (let r = 0; r <= rounds; r++) {
      const own = new Set<string>();
      while (own.size < 30) own.add(`w${zipfRank(next, 10)}`);
      const added: string[] = [];
      while (added.length < 20) {
        const lexeme = `w${zipfRank(next, 0)}`;
        if (!own.has(lexeme) && !added.includes(lexeme)) added.push(lexeme);
      }
      const weights = new Map(added.map((lexeme, i) => [lexeme, 0.3 / (i + 2)]));
      const first = new Map([...own].map((lexeme) => [lexeme, 1]));
      const rm3 = new Map([...[...own].map((lexeme) => [lexeme, 0.7 / 30] as const), ...weights]);
      const feedback = new Set(added);
      const memo: LexicalPassMemo = {};
      const reuse = { memo, expansion: { ownWeight: 0.7 / 30, weights } };
      const byLists = { windows: false };
      const t0 = performance.now();
      snapshot.rank(first, lists, query, byLists);
      const t1 = performance.now();
      snapshot.rank(rm3, lists, query, { feedback, cap: FEEDBACK_CAP, ...byLists });
      const t2 = performance.now();
      snapshot.rank(first, lists, query, { reuse: { memo }, ...byLists });
      const t3 = performance.now();
      snapshot.rank(rm3, lists, query, { feedback, cap: FEEDBACK_CAP, reuse, ...byLists });
      const t4 = performance.now();
      if (!memo.reused) throw new Error('the second pass did not start from the first');
      // By windows (docs/adr/0060): the first pass keeps its top k, RM3 ranked in full, then
      // from the k-th best the first pass's top k reach (docs/adr/0063).
      const windows = { windows: true };
      const top: LexicalPassMemo = {};
      snapshot.rank(first, lists, query, { ...windows, reuse: { memo: top } });
      const t5 = performance.now();
      snapshot.rank(rm3, lists, query, { feedback, cap: FEEDBACK_CAP, ...windows });
      const t6 = performance.now();
      const seeded = { memo: top, expansion: reuse.expansion };
      snapshot.rank(rm3, lists, query, { feedback, cap: FEEDBACK_CAP, ...windows, reuse: seeded });
      const t7 = performance.now();
      if (!top.reused) throw new Error("RM3's pass by windows did not start from the first's top");
      if (r === 0) continue;
      samples.first.push(t1 - t0);
      samples.full.push(t2 - t1);
      samples.keeping.push(t3 - t2);
      reusing.push(t4 - t3);
      samples.windowsFirst.push(t5 - t4);
      samples.windowsFull.push(t6 - t5);
      samples.windowsSeeded.push(t7 - t6);
      postings += [...rm3.keys()].reduce((sum, k) => sum + (lists.get(k)?.size ?? 0), 0);
    }
    const mean = Math.round(postings / rounds);
    timings[`long_first_pass_${reader}`] = figures(mean, samples.first);
    timings[`long_rm3_capped_${reader}`] = figures(mean, samples.full);
    timings[`long_first_pass_keeping_${reader}`] = figures(mean, samples.keeping);
    timings[`long_rm3_capped_reusing_${reader}`] = figures(mean, reusing);
    timings[`long_first_pass_windows_${reader}`] = figures(mean, samples.windowsFirst);
    timings[`long_rm3_capped_windows_${reader}`] = figures(mean, samples.windowsFull);
    timings[`long_rm3_capped_windows_seeded_${reader}`] = figures(mean, samples.windowsSeeded);
  }
  return timings;
}

/**
 * BM25 in memory (`SpaceSnapshot.rank`, docs/adr/0029) on a synthetic space: what scoring alone
 * costs at 100,000 and 1,000,000 chunks, for a first pass and an RM3 pass, everything readable or
 * a third of it, with ADR 19's statistics over the caller's readable chunks and with ADR 56's
 * reference statistics, RM3 with and without its feedback cap. No services, no
 * Postgres: the postings are already in memory, as a warm snapshot holds them.
 */
export function runLexicalBench(options: LexicalBenchOptions) {
  const results: Record<string, unknown> = {};
  for (const size of options.sizes) {
    const next = random(size);
    const started = performance.now();
    const rows: SpaceChunk[] = Array.from({ length: size }, (_, o) => ({
      documentId: `doc-${Math.floor(o / 2)}`,
      documentVersion: 1,
      chunkIndex: o % 2,
      length: LEXEMES_PER_CHUNK,
      startOffset: 0,
      endOffset: 1_000,
      principals: o % 3 === 0 ? ['u:reader'] : ['g:others'],
      knowledgeBaseIds: ['kb'],
      tags: [],
      uploadedAt: 0,
      metadata: {},
    }));
    const snapshot = new SpaceSnapshot(1, 1, rows);
    const lists = postings(size, next);
    const build_s = (performance.now() - started) / 1000;
    const postingCount = [...lists.values()].reduce((sum, list) => sum + list.size, 0);
    const shapes = {
      first_pass: new Map(QUERY_TERMS.map((rank) => [`w${rank}`, 1])),
      rm3: new Map([
        ...QUERY_TERMS.map((rank) => [`w${rank}`, 0.14] as const),
        ...FEEDBACK_TERMS.map((rank, i) => [`w${rank}`, 0.3 / (i + 2)] as const),
      ]),
    };
    const readers = { everything: undefined, a_third: ['u:reader'] };
    const expansion = new Map(FEEDBACK_TERMS.map((rank, i) => [`w${rank}`, 0.3 / (i + 2)]));
    const feedback = new Set(
      FEEDBACK_TERMS.filter((rank) => !QUERY_TERMS.includes(rank)).map((rank) => `w${rank}`),
    );
    // Readable statistics (ADR 19) and the reference (ADR 56); RM3 uncapped and capped.
    const reference = zipfReference();
    const scorings: Record<string, Record<string, Scoring>> = {
      readable: { uncapped: {}, capped: { feedback, cap: FEEDBACK_CAP } },
      reference: { uncapped: { reference }, capped: { reference, feedback, cap: FEEDBACK_CAP } },
    };
    const timings: Record<string, unknown> = {};
    for (const [statistics, variants] of Object.entries(scorings)) {
      for (const [shape, weights] of Object.entries(shapes)) {
        for (const [variant, scoring] of Object.entries(variants)) {
          if (shape === 'first_pass' && variant === 'capped') continue;
          for (const [reader, principals] of Object.entries(readers)) {
            const query = { ...(principals ? { principals } : {}), topK: 40 };
            const scored = [...weights.keys()].reduce(
              (sum, k) => sum + (lists.get(k)?.size ?? 0),
              0,
            );
            const name = shape === 'rm3' ? `rm3_${variant}` : shape;
            // List by list (docs/adr/0055) and by windows (docs/adr/0060).
            for (const windows of [false, true]) {
              const scoredAs = { ...scoring, windows };
              snapshot.rank(weights, lists, query, scoredAs);
              const samples: number[] = [];
              for (let r = 0; r < options.rounds; r++) {
                const t = performance.now();
                snapshot.rank(weights, lists, query, scoredAs);
                samples.push(performance.now() - t);
              }
              const row = `${statistics}_${name}${windows ? '_windows' : ''}_${reader}`;
              timings[row] = figures(scored, samples);
            }
            if (shape !== 'rm3') continue;
            // RM3's second pass from the first pass's scores (docs/adr/0058): the first pass
            // keeping them, then the second adding the feedback's shares, each timed.
            const keeping: number[] = [];
            const reusing: number[] = [];
            const reuse = { ownWeight: 0.7 / QUERY_TERMS.length, weights: expansion };
            for (let r = 0; r <= options.rounds; r++) {
              const memo: LexicalPassMemo = {};
              const t0 = performance.now();
              const byLists = { ...scoring, windows: false };
              snapshot.rank(shapes.first_pass, lists, query, { ...byLists, reuse: { memo } });
              const t1 = performance.now();
              const second = { ...byLists, feedback, reuse: { memo, expansion: reuse } };
              snapshot.rank(weights, lists, query, second);
              const t2 = performance.now();
              if (!memo.reused) throw new Error('the second pass did not start from the first');
              if (r === 0) continue;
              keeping.push(t1 - t0);
              reusing.push(t2 - t1);
            }
            const own = QUERY_TERMS.reduce(
              (sum, rank) => sum + (lists.get(`w${rank}`)?.size ?? 0),
              0,
            );
            timings[`${statistics}_first_pass_keeping_${variant}_${reader}`] = figures(
              own,
              keeping,
            );
            timings[`${statistics}_${name}_reusing_${reader}`] = figures(scored, reusing);
          }
        }
      }
    }
    Object.assign(timings, longQueries(snapshot, lists, options.rounds));
    results[String(size)] = {
      chunks: size,
      postings: postingCount,
      build_s: Math.round(build_s * 10) / 10,
      rank: timings,
    };
  }
  return { lexical: results };
}
