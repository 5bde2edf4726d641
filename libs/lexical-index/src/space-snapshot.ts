import { type FilterableFields, matchesFilter } from '@kb/contracts';

import type { ChunkRef, LexicalQuery, Posting, SpaceChunk } from './lexical-index';
import { BM25_B, BM25_K1 } from './pg-lexical-index';

const READER_SETS = 32;

/** One lexeme's postings in a snapshot: chunk ordinals and counts. */
export interface PostingList {
  size: number;
  ordinals: Int32Array;
  tfs: Int32Array;
}

/** Which chunks a principal set may read, and the statistics BM25 takes over them. */
interface Readers {
  /** Null: every chunk (no ACL filter). */
  mask: Uint8Array | null;
  n: number;
  avgdl: number;
}

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
  /** What filters read, one entry per distinct set (a document's chunks share theirs). */
  private readonly attributes: Array<Omit<FilterableFields, 'documentId'>> = [];
  private readonly attributesOf: Int32Array;
  private readonly readers = new Map<string, Readers>();
  private readonly totalLength: number;
  private scratchArrays?: { scores: Float64Array; seen: Uint8Array; touched: Int32Array };

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
    rows.forEach((row, o) => {
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
    this.principals = new Memberships(rows.map((row) => row.principals));
    this.knowledgeBases = new Memberships(rows.map((row) => row.knowledgeBaseIds));
  }

  chunk(o: number): { ref: ChunkRef; key: string; startOffset: number; endOffset: number } {
    const ref = {
      documentId: this.documentIds[o]!,
      documentVersion: this.versions[o]!,
      chunkIndex: this.chunkIndexes[o]!,
    };
    return { ref, key: refKey(ref), startOffset: this.starts[o]!, endOffset: this.ends[o]! };
  }

  /** Postings read from Postgres as lists per lexeme; a chunk not in the snapshot is skipped. */
  postingLists(lexemes: string[], rows: Posting[]): Map<string, PostingList> {
    const grouped = new Map<string, { ordinals: number[]; tfs: number[] }>(
      lexemes.map((lexeme) => [lexeme, { ordinals: [], tfs: [] }]),
    );
    for (const row of rows) {
      const o = this.ordinals.get(row.chunk);
      const list = grouped.get(row.lexeme);
      if (o === undefined || !list) continue;
      list.ordinals.push(o);
      list.tfs.push(row.tf);
    }
    return new Map(
      [...grouped].map(([lexeme, list]) => [
        lexeme,
        {
          size: list.ordinals.length,
          ordinals: Int32Array.from(list.ordinals),
          tfs: Int32Array.from(list.tfs),
        },
      ]),
    );
  }

  /**
   * Okapi BM25 as `PgLexicalIndex.search` computes it: N, avgdl and each term's df over the
   * chunks the caller may read; knowledge bases and the filter narrow the results only (before
   * the cut to `topK`). Best first, ties by document id then chunk index.
   */
  rank(
    weights: Map<string, number>,
    lists: Map<string, PostingList>,
    query: Pick<LexicalQuery, 'principals' | 'knowledgeBaseIds' | 'filter' | 'topK'>,
  ): Array<{ ordinal: number; score: number }> {
    const { mask, n, avgdl } = this.readersOf(query.principals);
    const { scores, seen, touched } = this.scratch();
    let count = 0;
    // Locals, not the imported constants: a re-exported constant is a getter call in CommonJS,
    // and these loops run once per posting.
    const k1 = BM25_K1;
    const b = BM25_B;
    const lengths = this.lengths;
    for (const [lexeme, weight] of weights) {
      const list = lists.get(lexeme);
      if (!list || list.size === 0) continue;
      const { ordinals, tfs } = list;
      let df = 0;
      if (mask) for (let i = 0; i < list.size; i++) df += mask[ordinals[i]!]!;
      else df = list.size;
      if (df === 0) continue;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      // Postgres' order of operations, so each term's share is the same double:
      // (weight · idf) · (tf · (k1 + 1)) / (tf + k1 · (1 − b + b · length / avgdl)).
      const weighted = weight * idf;
      const saturation = k1 + 1;
      for (let i = 0; i < list.size; i++) {
        const o = ordinals[i]!;
        if (mask && !mask[o]) continue;
        const tf = tfs[i]!;
        scores[o] +=
          (weighted * (tf * saturation)) / (tf + k1 * (1 - b + (b * lengths[o]!) / avgdl));
        if (!seen[o]) {
          seen[o] = 1;
          touched[count++] = o;
        }
      }
    }
    try {
      return this.best(scores, touched, count, query);
    } finally {
      for (let i = 0; i < count; i++) {
        scores[touched[i]!] = 0;
        seen[touched[i]!] = 0;
      }
    }
  }

  /**
   * The per-search arrays, allocated once per snapshot and left zeroed after each search (a
   * search runs to its end synchronously, so two never share them): allocating and zeroing them
   * per search cost as much as scoring at 100,000 chunks.
   */
  private scratch(): { scores: Float64Array; seen: Uint8Array; touched: Int32Array } {
    this.scratchArrays ??= {
      scores: new Float64Array(this.size),
      seen: new Uint8Array(this.size),
      touched: new Int32Array(this.size),
    };
    return this.scratchArrays;
  }

  /** The best `topK` of the scored chunks in scope and passing the filter, best first. */
  private best(
    scores: Float64Array,
    touched: Int32Array,
    count: number,
    query: Pick<LexicalQuery, 'knowledgeBaseIds' | 'filter' | 'topK'>,
  ): Array<{ ordinal: number; score: number }> {
    const inScope = query.knowledgeBaseIds?.length
      ? this.knowledgeBases.mask(query.knowledgeBaseIds)
      : null;
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
    let n = this.size;
    let total = this.totalLength;
    if (mask) {
      n = 0;
      total = 0;
      for (let o = 0; o < this.size; o++) {
        if (!mask[o]) continue;
        n++;
        total += this.lengths[o]!;
      }
    }
    const readers = { mask, n, avgdl: Math.max(n > 0 ? total / n : 1, 1) };
    this.readers.set(key, readers);
    if (this.readers.size > READER_SETS) {
      this.readers.delete(this.readers.keys().next().value as string);
    }
    return readers;
  }
}

/** Per chunk, a list of names (principals, knowledge bases), interned, in one flat array. */
class Memberships {
  private readonly ids = new Map<string, number>();
  private readonly starts: Int32Array;
  private readonly members: Int32Array;

  constructor(lists: string[][]) {
    this.starts = new Int32Array(lists.length + 1);
    const members: number[] = [];
    lists.forEach((names, o) => {
      for (const name of names) {
        let id = this.ids.get(name);
        if (id === undefined) {
          id = this.ids.size;
          this.ids.set(name, id);
        }
        members.push(id);
      }
      this.starts[o + 1] = members.length;
    });
    this.members = Int32Array.from(members);
  }

  /** 1 for each chunk holding any of `names` (SQL's `&&`), 0 otherwise. */
  mask(names: string[]): Uint8Array {
    const wanted = new Uint8Array(this.ids.size);
    for (const name of names) {
      const id = this.ids.get(name);
      if (id !== undefined) wanted[id] = 1;
    }
    const mask = new Uint8Array(this.starts.length - 1);
    for (let o = 0; o < mask.length; o++) {
      for (let i = this.starts[o]!; i < this.starts[o + 1]!; i++) {
        if (wanted[this.members[i]!]) {
          mask[o] = 1;
          break;
        }
      }
    }
    return mask;
  }
}

const refKey = (ref: ChunkRef): string =>
  `${ref.documentId}#${ref.documentVersion}#${ref.chunkIndex}`;

/**
 * The k-th largest score among the first `count` candidates in scope (k ≥ 1): a min-heap of k;
 * -Infinity when fewer than k are in scope.
 */
function kthLargest(
  candidates: Int32Array,
  count: number,
  inScope: Uint8Array | null,
  scores: Float64Array,
  k: number,
): number {
  const heap = new Float64Array(k);
  let size = 0;
  for (let c = 0; c < count; c++) {
    const o = candidates[c]!;
    if (inScope && !inScope[o]) continue;
    const score = scores[o]!;
    if (size < k) {
      // Sift up.
      let i = size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heap[parent]! <= score) break;
        heap[i] = heap[parent]!;
        i = parent;
      }
      heap[i] = score;
    } else if (score > heap[0]!) {
      // Replace the smallest and sift down.
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= k) break;
        const child = left + 1 < k && heap[left + 1]! < heap[left]! ? left + 1 : left;
        if (heap[child]! >= score) break;
        heap[i] = heap[child]!;
        i = child;
      }
      heap[i] = score;
    }
  }
  return size < k ? -Infinity : heap[0]!;
}
