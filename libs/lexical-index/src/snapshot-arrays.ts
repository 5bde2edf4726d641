import type { Readers } from './bm25-statistics';
import type { ChunkRef } from './lexical-index';

/** Per chunk, a list of names (principals, knowledge bases), interned, in one flat array. */
export class Memberships {
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

/** N and avgdl over the chunks in `mask` (all: null), with no df counted yet. */
export function readersIn(mask: Uint8Array | null, lengths: Int32Array, total: number): Readers {
  let n = lengths.length;
  if (mask) {
    n = 0;
    total = 0;
    for (let o = 0; o < lengths.length; o++) {
      if (!mask[o]) continue;
      n++;
      total += lengths[o]!;
    }
  }
  return { mask, n, avgdl: Math.max(n > 0 ? total / n : 1, 1), dfs: new Map() };
}

export const refKey = (ref: ChunkRef): string =>
  `${ref.documentId}#${ref.documentVersion}#${ref.chunkIndex}`;

/**
 * The k-th largest score among the first `count` candidates in scope (k ≥ 1): a min-heap of k;
 * -Infinity when fewer than k are in scope.
 */
export function kthLargest(
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
