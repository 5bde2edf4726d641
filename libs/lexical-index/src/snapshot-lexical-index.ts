import type { IndexSpace } from '@kb/contracts';
import { raceAbort } from '@kb/database';

import { FEEDBACK_CAP, ownWeight, queryWeights } from './bm25-rank';
import { ChunkContentCache } from './chunk-content-cache';
import type {
  ChunkLocation,
  ChunkRef,
  ChunkText,
  LexicalIndex,
  LexicalMatch,
  LexicalPassMemo,
  LexicalQuery,
  QueryExpansion,
  TermVector,
  WarmSpace,
} from './lexical-index';
import { parseLexicalQuery } from './lexical-query.parser';
import { CarriedPostings, coldLists, HeldPostingLists } from './posting-lists';
import type { SnapshotOptions, SnapshotSource } from './snapshot-options';
import { SourcePassThrough } from './source-pass-through';
import { type PostingList, SpaceSnapshot } from './space-snapshot';

export type { SnapshotOptions, SnapshotSource } from './snapshot-options';

/** Each feedback lexeme's weight (summed, as `queryWeights` sums them). */
function expansionWeights(expansion: QueryExpansion): Map<string, number> {
  const weights = new Map<string, number>();
  for (const { lexeme, weight } of expansion.terms) {
    weights.set(lexeme, (weights.get(lexeme) ?? 0) + weight);
  }
  return weights;
}

type FirstPassSnapshot = { space: IndexSpace; snapshot: SpaceSnapshot };

/** A build may start again only after this many times its last duration (under constant writes, builds take at most a fifth of the time). */
const BUILD_BACKOFF = 4;
/**
 * From this many chunks in its last snapshot, a space's search waits for the next snapshot
 * (within its deadline) rather than going to Postgres meanwhile: there one BM25 pass took 1.5 s
 * at 99,372 chunks and 3.5–5.1 s at 955,500 (twice a search with RM3), against a build of 1.3
 * and 10–16 s, which those searches slowed further (docs/performance.md).
 */
export const WAIT_FOR_BUILD_FROM = 50_000;
/** How long a space too large to hold is not tried again. */
const OVERSIZED_RETRY_MS = 10 * 60_000;
const ANALYSES = 2_000;
const NO_TEXT = { title: '', text: '' };
/**
 * What the chunk-content caches hold at most: titles and texts 16 M characters (16–32 MB), term
 * vectors 500,000 terms (the feedback's ten chunks a search, about 50 terms each), locations
 * 100,000 chunks.
 */
const TEXT_CHARACTERS = 16_000_000;
const TERM_VECTOR_TERMS = 500_000;
const LOCATIONS = 100_000;
/** Lexemes whose lists `warm` reads in one query. */
const WARM_LISTS_PER_READ = 256;

/**
 * BM25 in memory over a snapshot of each space, taken at the space's index generation
 * (docs/adr/0029, seventh pass). In Postgres, each search scanned the space's readable chunks for
 * N and avgdl and joined every posting of its terms with them: 5–13 ms per pass on a CISI-sized
 * space, growing with the space, twice per hybrid search (RM3). Here the chunk list (lengths,
 * readers, knowledge bases), each lexeme's postings once read, and each principal set's readable
 * chunks are kept per generation (the next generation's snapshot takes the lists over,
 * renumbered: posting-lists.ts), and a search is arithmetic over arrays.
 *
 * Correctness rests on the generation, as the result cache's does: everything held was read after
 * the generation it is filed under was read, and a search uses it only while that generation is
 * still current, so a bump (every write, ACL change and removal makes one) retires it at once
 * (RM3's pass, milliseconds later, ranks in its first pass's snapshot without asking again).
 * Carried posting lists are the one exception, and hold by chunk identity: a chunk's postings
 * never change, and who may read it and what filters see come from the new rows (docs/adr/0061).
 * Scores are the same BM25 as Postgres computes (same statistics over the caller's readable
 * chunks, same formula and order of operations; sums may differ in the last bit), and filters are
 * checked with the reference semantics the SQL reproduces (`matchesFilter`). Searches with typed
 * syntax (phrases, operators, exclusions) or identifiers, whose checks need the chunk text, go to
 * Postgres unchanged. A chunk's title, text, term vector and location, which its identity fixes,
 * are kept across generations (`ChunkContentCache`). Writes and the other reads are passed
 * through.
 */
export class SnapshotLexicalIndex extends SourcePassThrough implements LexicalIndex {
  private readonly snapshots = new Map<IndexSpace, SpaceSnapshot>();
  private readonly builds = new Map<IndexSpace, Promise<SpaceSnapshot | undefined>>();
  private readonly lastBuild = new Map<IndexSpace, { endedAt: number; took: number }>();
  private readonly oversized = new Map<IndexSpace, number>();
  private readonly lists: HeldPostingLists;
  /** Where each search's first pass ranked: RM3's pass ranks there too (docs/adr/0058). */
  private readonly firstPasses = new WeakMap<LexicalPassMemo, FirstPassSnapshot>();
  private readonly analyses = new Map<string, string[]>();
  /** What a chunk's identity fixes (chunk-content-cache.ts): read once, kept across generations. */
  private readonly textCache = new ChunkContentCache<ChunkText>(
    TEXT_CHARACTERS,
    ({ title, text }) => title.length + text.length,
  );
  private readonly vectors = new ChunkContentCache<TermVector>(
    TERM_VECTOR_TERMS,
    ({ terms }) => terms.size,
  );
  private readonly places = new ChunkContentCache<ChunkLocation>(LOCATIONS, () => 1);
  private nextSnapshotId = 1;
  private readonly maxChunks: number;
  private readonly now: () => number;

  constructor(
    source: SnapshotSource,
    private readonly options: SnapshotOptions,
  ) {
    super(source);
    this.maxChunks = options.maxChunks ?? 250_000;
    this.lists = new HeldPostingLists(options.maxPostings ?? 4_000_000);
    this.now = options.now ?? Date.now;
  }

  /** Past `query.signal` it rejects at once; Postgres' statement is cancelled (docs/adr/0042). */
  search(space: IndexSpace, query: LexicalQuery): Promise<LexicalMatch[]> {
    return raceAbort(this.ranked(space, query), query.signal);
  }

  private async ranked(space: IndexSpace, query: LexicalQuery): Promise<LexicalMatch[]> {
    const parsed = parseLexicalQuery(query.text);
    const inMemory = !parsed.constraint && parsed.preferred.length === 0;
    const first = query.expansion && query.passMemo && this.firstPasses.get(query.passMemo);
    const snapshot = !inMemory
      ? undefined
      : first && first.space === space
        ? first.snapshot
        : await this.snapshotOf(space);
    if (!snapshot) {
      this.options.onSearch?.('index');
      return this.source.search(space, query);
    }
    const lexemes = await this.analyzed(parsed.scoringText);
    const { weights, feedback } = queryWeights(lexemes, query.expansion);
    const lists = await this.postingsFor(space, snapshot, [...weights.keys()]);
    const { expansion, passMemo } = query;
    const { windowedFrom } = this.options;
    if (passMemo && !expansion) this.firstPasses.set(passMemo, { space, snapshot });
    const ranked = snapshot.rank(weights, lists, query, {
      reference: this.options.reference,
      tenantWide: this.options.tenantWide,
      feedback,
      cap: this.options.feedbackCap === undefined ? FEEDBACK_CAP : this.options.feedbackCap,
      windows: windowedFrom === undefined ? undefined : snapshot.size >= windowedFrom,
      // RM3's second pass adds the feedback's shares to the first's scores (docs/adr/0058).
      reuse: passMemo && {
        memo: passMemo,
        expansion: expansion && {
          ownWeight: ownWeight(lexemes, expansion),
          weights: expansionWeights(expansion),
        },
      },
    });
    const chunks = ranked.map(({ ordinal }) => snapshot.chunk(ordinal));
    this.options.onSearch?.('memory');
    const texts =
      query.withText === false
        ? undefined
        : await this.texts(
            space,
            chunks.map((c) => c.ref),
          );
    const matches: LexicalMatch[] = [];
    chunks.forEach(({ ref, key, startOffset, endOffset }, i) => {
      const text = texts ? texts.get(key) : NO_TEXT;
      // A chunk removed since the snapshot (its bump not yet made) is left out, as Postgres would,
      // unless its text is held: then it shows until the bump retires the snapshot.
      if (!text) return;
      // Spelled out, not spread: on Node 20 a spread followed by more properties cost about
      // 1.5 µs an object (two hundred per hybrid search, docs/adr/0029); Node 24 ~50 ns (ADR 35).
      matches.push({
        documentId: ref.documentId,
        documentVersion: ref.documentVersion,
        chunkIndex: ref.chunkIndex,
        title: text.title,
        text: text.text,
        startOffset,
        endOffset,
        score: ranked[i]!.score,
      });
    });
    return matches;
  }

  /**
   * The space's snapshot at its current generation, or undefined (Postgres answers): none built
   * yet (one is started; a space whose last snapshot was large waits for it instead), the
   * generation unreadable, or the space too large to hold.
   */
  private async snapshotOf(space: IndexSpace): Promise<SpaceSnapshot | undefined> {
    const generation = await this.options.generation(space).catch(() => undefined);
    if (generation === undefined) return undefined;
    const held = this.snapshots.get(space);
    if (held?.generation === generation) {
      this.snapshots.delete(space);
      this.snapshots.set(space, held);
      return held;
    }
    const build = this.build(space, generation);
    const large = (held?.size ?? 0) >= (this.options.waitForBuildFrom ?? WAIT_FOR_BUILD_FROM);
    return this.options.waitForSnapshot || large ? await build : undefined;
  }

  private build(space: IndexSpace, generation: number): Promise<SpaceSnapshot | undefined> {
    const running = this.builds.get(space);
    if (running) return running.then((s) => (s?.generation === generation ? s : undefined));
    const now = this.now();
    const last = this.lastBuild.get(space);
    const oversizedAt = this.oversized.get(space);
    const waiting =
      (last && now - last.endedAt < BUILD_BACKOFF * last.took && !this.options.waitForSnapshot) ||
      (oversizedAt !== undefined && now - oversizedAt < OVERSIZED_RETRY_MS);
    if (waiting) return Promise.resolve(undefined);
    const build = this.source
      .spaceChunks(space)
      .then(async (rows) => {
        if (rows.length > this.maxChunks) {
          this.oversized.set(space, this.now());
          return undefined;
        }
        this.oversized.delete(space);
        const snapshot = new SpaceSnapshot(this.nextSnapshotId++, generation, rows);
        // The last snapshot's lists, renumbered, as searches ask for them (docs/adr/0061); if the
        // new chunks' postings cannot be read, the new snapshot reads its lists cold.
        const last = this.snapshots.get(space);
        const carried =
          last &&
          (await CarriedPostings.between(last, snapshot, (chunks) =>
            this.source.termVectors(space, chunks),
          ).catch((error: unknown) => {
            this.options.onCarryFailed?.(space, error);
            return undefined;
          }));
        if (carried) this.lists.carry(snapshot, carried);
        this.snapshots.delete(space);
        this.snapshots.set(space, snapshot);
        this.evictSnapshots();
        this.options.onBuilt?.(space, rows.length, this.now() - now);
        return snapshot;
      })
      // A failed build is retried by a later search; this one is answered by Postgres.
      .catch((error: unknown) => {
        this.options.onBuildFailed?.(space, error);
        return undefined;
      })
      .finally(() => {
        this.builds.delete(space);
        this.lastBuild.set(space, { endedAt: this.now(), took: this.now() - now });
      });
    this.builds.set(space, build);
    return build;
  }

  private evictSnapshots(): void {
    let held = 0;
    for (const snapshot of this.snapshots.values()) held += snapshot.size;
    for (const [space, snapshot] of this.snapshots) {
      if (held <= this.maxChunks) break;
      this.snapshots.delete(space);
      held -= snapshot.size;
    }
  }

  /** The query text's lexemes, as Postgres' `english` configuration makes them (kept per text). */
  private async analyzed(text: string): Promise<string[]> {
    const known = this.analyses.get(text);
    if (known) return known;
    const lexemes = await this.source.analyze(text);
    this.analyses.set(text, lexemes);
    if (this.analyses.size > ANALYSES) {
      this.analyses.delete(this.analyses.keys().next().value as string);
    }
    return lexemes;
  }

  /** Each lexeme's postings in the snapshot; those not held or carried are read in one query. */
  private async postingsFor(
    space: IndexSpace,
    snapshot: SpaceSnapshot,
    lexemes: string[],
  ): Promise<Map<string, PostingList>> {
    const lists = this.lists.of(snapshot, lexemes);
    const missing = lexemes.filter((lexeme) => !lists.has(lexeme));
    if (missing.length === 0) return lists;
    const read = coldLists(snapshot, missing, await this.source.postingsOf(space, missing));
    this.lists.hold(snapshot, read);
    for (const [lexeme, list] of read) lists.set(lexeme, list);
    return lists;
  }

  /**
   * What this process holds, for the next to take up (`warm`, docs/adr/0062): each space with a
   * snapshot of some chunks, the most recently searched first, with the lexemes whose lists it
   * holds there.
   */
  warmSet(limits: { spaces: number; lexemes: number }): WarmSpace[] {
    // An empty space (a tenant since deleted, say) is not worth a build at the next start.
    return [...this.snapshots]
      .filter(([, snapshot]) => snapshot.size > 0)
      .reverse()
      .slice(0, limits.spaces)
      .map(([space, snapshot]) => ({
        space,
        lexemes: this.lists.lexemesOf(snapshot).slice(0, limits.lexemes),
      }));
  }

  /**
   * The space's snapshot at its current generation, built and waited for, and these lexemes'
   * lists read into it (a few hundred a query): a new process takes up what the last one held
   * before it answers (docs/adr/0062). False when the space cannot be held.
   */
  async warm(space: IndexSpace, lexemes: string[]): Promise<boolean> {
    const generation = await this.options.generation(space).catch(() => undefined);
    if (generation === undefined) return false;
    const held = this.snapshots.get(space);
    const snapshot = held?.generation === generation ? held : await this.build(space, generation);
    if (!snapshot) return false;
    for (let i = 0; i < lexemes.length; i += WARM_LISTS_PER_READ) {
      await this.postingsFor(space, snapshot, lexemes.slice(i, i + WARM_LISTS_PER_READ));
    }
    return true;
  }

  texts(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, ChunkText>> {
    return this.textCache.get(space, chunks, (missing) => this.source.texts(space, missing));
  }

  locations(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, ChunkLocation>> {
    return this.places.get(space, chunks, (missing) => this.source.locations(space, missing));
  }

  termVectors(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, TermVector>> {
    return this.vectors.get(space, chunks, (missing) => this.source.termVectors(space, missing));
  }
}
