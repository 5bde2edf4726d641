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
    const scores = new Float64Array(this.size);
    const seen = new Uint8Array(this.size);
    const touched: number[] = [];
    for (const [lexeme, weight] of weights) {
      const list = lists.get(lexeme);
      if (!list || list.size === 0) continue;
      let df = 0;
      if (mask) for (let i = 0; i < list.size; i++) df += mask[list.ordinals[i]!]!;
      else df = list.size;
      if (df === 0) continue;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (let i = 0; i < list.size; i++) {
        const o = list.ordinals[i]!;
        if (mask && !mask[o]) continue;
        const tf = list.tfs[i]!;
        // Postgres' order of operations, so each term's share is the same double.
        const share =
          (weight * idf * (tf * (BM25_K1 + 1))) /
          (tf + BM25_K1 * (1 - BM25_B + (BM25_B * this.lengths[o]!) / avgdl));
        scores[o] += share;
        if (!seen[o]) {
          seen[o] = 1;
          touched.push(o);
        }
      }
    }
    const inScope = query.knowledgeBaseIds?.length
      ? this.knowledgeBases.mask(query.knowledgeBaseIds)
      : null;
    const candidates = inScope ? touched.filter((o) => inScope[o]) : touched;
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
      candidates.length > 2 * query.topK && query.topK > 0
        ? kthLargest(candidates, scores, query.topK)
        : -Infinity;
    const top: Array<{ ordinal: number; score: number }> = [];
    const take = (pool: number[]) => {
      for (const o of pool.sort(order)) {
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
    take(candidates.filter((o) => scores[o]! >= threshold));
    if (top.length < query.topK && threshold > -Infinity) {
      take(candidates.filter((o) => scores[o]! < threshold));
    }
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

/** The k-th largest score among the candidates (k ≥ 1, at most their number): a min-heap of k. */
function kthLargest(candidates: number[], scores: Float64Array, k: number): number {
  const heap = new Float64Array(k);
  let size = 0;
  for (const o of candidates) {
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
  return heap[0]!;
}
