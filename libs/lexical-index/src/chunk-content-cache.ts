import type { IndexSpace } from '@kb/contracts';
import { LRUCache } from 'lru-cache';

import type { ChunkRef } from './lexical-index';

/**
 * What Postgres holds of a chunk that never changes for it: its title and text, term vector and
 * location are fixed by (space, document, version, chunk index), since new content is a new
 * version and a space is one chunker. So unlike the snapshot's statistics, which a generation
 * retires, they can be kept across generations, least recently used evicted first once
 * `maxSize` (in `size` units) is reached. A removed chunk may stay here until evicted; it is read
 * only for chunks a search ranked, so it shows only in the moment between its removal and the
 * generation bump that retires the snapshot that ranked it (docs/adr/0029, eighth pass).
 */
export class ChunkContentCache<T extends object> {
  private readonly entries: LRUCache<string, T>;

  constructor(maxSize: number, size: (value: T) => number) {
    this.entries = new LRUCache<string, T>({
      maxSize,
      sizeCalculation: (value) => Math.max(1, size(value)),
    });
  }

  /**
   * The chunks' values by `documentId#version#chunkIndex` (the key the Postgres index answers
   * with): those held from here, the rest from one `read` of the missing. A chunk `read` does not
   * return is absent, and not remembered.
   */
  async get(
    space: IndexSpace,
    chunks: ChunkRef[],
    read: (missing: ChunkRef[]) => Promise<Map<string, T>>,
  ): Promise<Map<string, T>> {
    const found = new Map<string, T>();
    const missing: ChunkRef[] = [];
    for (const chunk of chunks) {
      const key = chunkKey(chunk);
      const value = this.entries.get(`${space}\u0000${key}`);
      if (value) found.set(key, value);
      else missing.push(chunk);
    }
    if (missing.length === 0) return found;
    for (const [key, value] of await read(missing)) {
      this.entries.set(`${space}\u0000${key}`, value);
      found.set(key, value);
    }
    return found;
  }

  get size(): number {
    return this.entries.size;
  }
}

const chunkKey = (chunk: ChunkRef): string =>
  `${chunk.documentId}#${chunk.documentVersion}#${chunk.chunkIndex}`;
