import { type FilterableFields, matchesFilter } from '@kb/contracts';

import {
  blendedIdf,
  capFeedback,
  dfOf,
  EVERYONE,
  type PostingList,
  PRIOR_CHUNKS,
  type Readers,
  scoreTerms,
  Scratch,
  type Term,
} from './bm25-rank';
import { type FirstPass, firstPassOf, secondPassOn } from './feedback-pass';
import type { ChunkRef, LexicalQuery, SpaceChunk } from './lexical-index';
import { ScopeMasks } from './scope-masks';
import type { Scoring } from './scoring';
import { kthLargest, Memberships, readersIn, refKey } from './snapshot-arrays';
import { scoreWindows } from './window-max-score';
import { FirstTop } from './window-seed';

const READER_SETS = 32;

/**
 * From this many chunks a pruned pass scores by windows with block bounds (window-max-score.ts,
 * docs/adr/0060) instead of list by list, and RM3's second pass ranks in full, from the k-th best
 * its first pass's top k reach (window-seed.ts, docs/adr/0063). Below it lists win
 * through the services: at ×52 (99,372 chunks) RM3's pass took 8.0 ms p50 list by list with its
 * memo against 12.3–12.8 by windows (docs/performance.md, 2026-11-27).
 */
export const WINDOWED_FROM = 200_000;

export type { PostingList } from './bm25-rank';
export type { Scoring } from './scoring';

/**
 * The chunks of one space at one generation, in columns: ids, lengths, offsets, and who may read
 * each and which knowledge bases hold it (as lists of interned names per chunk).
 */
export class SpaceSnapshot {
  readonly size: number;
  private readonly documentIds: string[];
  private readonly versions: Int32Array;
  private readonly chunkIndexes: Int32Array;
  private readonly lengths: Int32Array;
  private readonly starts: Int32Array;
  private readonly ends: Int32Array;
  private readonly ordinals = new Map<string, number>();
  private readonly principals: Memberships;
  private readonly knowledgeBases: Memberships;
  private readonly scopes: ScopeMasks;
  /** What filters read, one entry per distinct set (a document's chunks share theirs). */
  private readonly attributes: Array<Omit<FilterableFields, 'documentId'>> = [];
  private readonly attributesOf: Int32Array;
  private readonly readers = new Map<string, Readers>();
  private readonly totalLength: number;
  private scratchArrays?: Scratch;
  /** The shortest chunk's length: the bound on any share of a term (bm25-rank.ts). */
  private readonly minLength: number;

  constructor(
    readonly id: number,
    readonly generation: number,
    rows: SpaceChunk[],
  ) {
    const size = rows.length;
    this.size = size;
    this.documentIds = new Array<string>(size);
    this.versions = new Int32Array(size);
    this.chunkIndexes = new Int32Array(size);
    this.lengths = new Int32Array(size);
    this.starts = new Int32Array(size);
    this.ends = new Int32Array(size);
    this.attributesOf = new Int32Array(size);
    const attributeIds = new Map<string, number>();
    let total = 0;
    let shortest = Infinity;
    rows.forEach((row, o) => {
      shortest = Math.min(shortest, row.length);
      this.documentIds[o] = row.documentId;
      this.versions[o] = row.documentVersion;
      this.chunkIndexes[o] = row.chunkIndex;
      this.lengths[o] = row.length;
      this.starts[o] = row.startOffset;
      this.ends[o] = row.endOffset;
      total += row.length;
      this.ordinals.set(refKey(row), o);
      const { tags, uploadedAt, metadata } = row;
      const attributeKey = JSON.stringify([tags, uploadedAt, metadata]);
      let id = attributeIds.get(attributeKey);
      if (id === undefined) {
        id = this.attributes.push({ tags, uploadedAt, metadata }) - 1;
        attributeIds.set(attributeKey, id);
      }
      this.attributesOf[o] = id;
    });
    this.totalLength = total;
    this.minLength = size > 0 ? shortest : 0;
    this.principals = new Memberships(rows.map((row) => row.principals));
    this.knowledgeBases = new Memberships(rows.map((row) => row.knowledgeBaseIds));
    this.scopes = new ScopeMasks(
      this.knowledgeBases,
      this.documentIds,
      this.attributes,
      this.attributesOf,
    );
  }

  chunk(o: number): { ref: ChunkRef; key: string; startOffset: number; endOffset: number } {
    const ref = this.refOf(o);
    return { ref, key: refKey(ref), startOffset: this.starts[o]!, endOffset: this.ends[o]! };
  }

  /** The ordinal of the chunk `<document>#<version>#<chunk>`, if the snapshot holds it. */
  ordinalOf(key: string): number | undefined {
    return this.ordinals.get(key);
  }

  refOf(o: number): ChunkRef {
    return {
      documentId: this.documentIds[o]!,
      documentVersion: this.versions[o]!,
      chunkIndex: this.chunkIndexes[o]!,
    };
  }

  keyOf(o: number): string {
    return refKey(this.refOf(o));
  }

  /**
   * `previous`'s chunks renumbered here (posting-lists.ts): for each of its ordinals, the ordinal
   * here of the same chunk with the same length and offsets, -1 for one not held so; and the
   * chunks here it did not hold so, ascending.
   */
  renumbering(previous: SpaceSnapshot): { remap: Int32Array; added: number[] } {
    const remap = new Int32Array(previous.size).fill(-1);
    const kept = new Uint8Array(this.size);
    for (const [key, p] of previous.ordinals) {
      const o = this.ordinals.get(key);
      if (o === undefined || this.lengths[o] !== previous.lengths[p]) continue;
      if (this.starts[o] !== previous.starts[p] || this.ends[o] !== previous.ends[p]) continue;
      remap[p] = o;
      kept[o] = 1;
    }
    const added: number[] = [];
    for (let o = 0; o < this.size; o++) if (!kept[o]) added.push(o);
    return { remap, added };
  }

  /**
   * Okapi BM25 as `PgLexicalIndex.search` computes it: N, avgdl and each term's df over the
   * chunks the caller may read, or with `scoring.reference` the reference's idf and mean length;
   * knowledge bases and the filter narrow the results only (before the cut to `topK`). Feedback
   * terms are held to `scoring.cap` (bm25-rank.ts). Best first, ties by document id then chunk
   * index.
   */
  rank(
    weights: Map<string, number>,
    lists: Map<string, PostingList>,
    query: Pick<LexicalQuery, 'principals' | 'knowledgeBaseIds' | 'filter' | 'topK'>,
    scoring: Scoring = {},
  ): Array<{ ordinal: number; score: number }> {
    const { reference, feedback, cap } = scoring;
    let readers = this.readersOf(query.principals);
    // Chunks every member may read: their counts reveal nothing to a member (docs/adr/0056).
    const everyone =
      reference && scoring.tenantWide && (!query.principals || query.principals.includes(EVERYONE))
        ? this.readersOf([EVERYONE])
        : undefined;
    if (reference) {
      const share = everyone ? everyone.n / (everyone.n + PRIOR_CHUNKS) : 0;
      const avgdl = share * (everyone?.avgdl ?? 0) + (1 - share) * reference.avgdl;
      readers = { ...readers, avgdl };
    }
    const own: Term[] = [];
    const ownLexemes: string[] = [];
    const added: Term[] = [];
    for (const [lexeme, weight] of weights) {
      const list = lists.get(lexeme);
      if (!list || list.size === 0) continue;
      let idf: number;
      if (everyone) {
        idf = blendedIdf(reference!.idf(lexeme), dfOf(everyone, lexeme, list), everyone.n);
      } else if (reference) {
        idf = reference.idf(lexeme);
      } else {
        const df = dfOf(readers, lexeme, list);
        if (df === 0) continue;
        idf = Math.log(1 + (readers.n - df + 0.5) / (df + 0.5));
      }
      if (feedback?.has(lexeme)) {
        added.push({ list, weight, idf });
      } else {
        own.push({ list, weight, idf });
        ownLexemes.push(lexeme);
      }
    }
    const kept = added.length === 0 || !cap ? added : capFeedback(own, added, cap);
    const terms = kept.length === 0 ? own : [...own, ...kept];
    // The knowledge bases and the filter as one mask: pruning finds the top k within it.
    const inScope = this.scopes.of(query.knowledgeBaseIds, query.filter);
    const scratch = this.scratch();
    const space = { lengths: this.lengths, minLength: this.minLength, readers };
    const prune = query.topK <= 0 ? undefined : { topK: query.topK, inScope };
    const { memo, expansion } = scoring.reuse ?? {};
    const passKey =
      memo &&
      JSON.stringify([
        query.principals ?? null,
        query.knowledgeBaseIds ?? [],
        query.filter ?? null,
      ]);
    const held = memo?.held as FirstPass | FirstTop | undefined;
    if (memo) memo.held = undefined;
    const mine = held?.owner === this && held.key === passKey && held.avgdl === readers.avgdl;
    const top = mine && held instanceof FirstTop ? held : undefined;
    const reused =
      expansion && mine && !(held instanceof FirstTop)
        ? secondPassOn(held!, own, ownLexemes, kept, expansion, space, scratch, prune)
        : undefined;
    let scored: { candidates: Int32Array; count: number } | undefined = reused;
    const windowed =
      prune !== undefined &&
      (scoring.windows ?? this.size >= WINDOWED_FROM) &&
      terms.length > 1 &&
      terms.every((term) => term.weight * term.idf > 0);
    // RM3's second pass by windows from the k-th best its first pass's top k reach (ADR 63).
    const atLeast =
      !reused && windowed && expansion ? top?.kthScore(terms, space, prune.topK) : undefined;
    if (memo && expansion) memo.reused = reused !== undefined || (atLeast ?? -Infinity) > -Infinity;
    if (!scored && windowed) scored = scoreWindows(terms, space, scratch, { ...prune, atLeast });
    if (!scored) {
      // A first pass keeping its memo keeps every chunk that could reach its top k when the
      // scans stopped, whole: the second pass starts from more complete scores (docs/adr/0059).
      const keepReached = memo !== undefined && !expansion;
      const full = scoreTerms(terms, space, scratch, prune && { ...prune, keepReached });
      if (memo && !expansion && added.length === 0 && own.every((term) => term.weight === 1)) {
        const terms = new Map(
          own.map((term, i) => [ownLexemes[i]!, { idf: term.idf, size: term.list.size }]),
        );
        const unscanned = full.unscanned.map((term) => ownLexemes[own.indexOf(term)]!);
        const base = { owner: this, key: passKey!, avgdl: readers.avgdl, terms, unscanned };
        memo.held = firstPassOf(base, full, scratch, inScope);
      }
      scored = full;
    }
    try {
      const ranked = this.best(scratch.scores, scored.candidates, scored.count, inScope, query);
      if (memo && !expansion && windowed) {
        const ordinals = Int32Array.from(ranked, ({ ordinal }) => ordinal).sort();
        memo.held = new FirstTop(this, passKey!, readers.avgdl, ordinals);
      }
      return ranked;
    } finally {
      scratch.clear();
    }
  }

  /** The per-search arrays, allocated once per snapshot (bm25-rank.ts). */
  private scratch(): Scratch {
    this.scratchArrays ??= new Scratch(this.size);
    return this.scratchArrays;
  }

  /** The best `topK` of the scored chunks in scope and passing the filter, best first. */
  private best(
    scores: Float64Array,
    touched: Int32Array,
    count: number,
    inScope: Uint8Array | null,
    query: Pick<LexicalQuery, 'filter' | 'topK'>,
  ): Array<{ ordinal: number; score: number }> {
    const order = (a: number, b: number) =>
      scores[b]! - scores[a]! ||
      (this.documentIds[a]! < this.documentIds[b]!
        ? -1
        : this.documentIds[a]! > this.documentIds[b]!
          ? 1
          : this.chunkIndexes[a]! - this.chunkIndexes[b]!);
    // Only the best are put in order: those scoring at least the k-th best score (found with a
    // bounded heap, many times faster than sorting every candidate with `order`), then the rest
    // if the filter leaves fewer than k of them.
    const threshold =
      count > 2 * query.topK && query.topK > 0
        ? kthLargest(touched, count, inScope, scores, query.topK)
        : -Infinity;
    const pool = (above: boolean): number[] => {
      const chosen: number[] = [];
      for (let i = 0; i < count; i++) {
        const o = touched[i]!;
        if ((!inScope || inScope[o]) && scores[o]! >= threshold === above) chosen.push(o);
      }
      return chosen;
    };
    const top: Array<{ ordinal: number; score: number }> = [];
    const take = (chosen: number[]) => {
      for (const o of chosen.sort(order)) {
        if (top.length >= query.topK) return;
        const attributes = this.attributes[this.attributesOf[o]!]!;
        if (
          !query.filter ||
          matchesFilter(query.filter, { documentId: this.documentIds[o]!, ...attributes })
        ) {
          top.push({ ordinal: o, score: scores[o]! });
        }
      }
    };
    take(pool(true));
    if (top.length < query.topK && threshold > -Infinity) take(pool(false));
    return top;
  }

  private readersOf(principals: string[] | undefined): Readers {
    const key = principals ? JSON.stringify([...principals].sort()) : '*';
    const known = this.readers.get(key);
    if (known) return known;
    const mask = principals ? this.principals.mask(principals) : null;
    const readers = readersIn(mask, this.lengths, this.totalLength);
    this.readers.set(key, readers);
    if (this.readers.size > READER_SETS) {
      this.readers.delete(this.readers.keys().next().value as string);
    }
    return readers;
  }
}
