import { totalmem } from 'node:os';
import { constrainedMemory } from 'node:process';

/** What the in-memory BM25 snapshots may hold across spaces (`SnapshotOptions`). */
export interface LexicalMemoryLimits {
  chunks: number;
  postings: number;
}

/**
 * The limits before `auto`, and still its least: 250,000 chunks and 4 million postings fit a
 * query-service pod of 1 GiB beside the models (the chart's default).
 */
export const LEXICAL_MEMORY_FLOOR: LexicalMemoryLimits = { chunks: 250_000, postings: 4_000_000 };

/**
 * `auto`'s arithmetic (docs/adr/0055, "Sized from memory"): a quarter of the memory the process
 * may use, half of it for chunks and half for postings. A chunk costs about 1,500 bytes in all
 * (its arrays, per-reader masks and scratch, cached terms and texts, and the build's rows: a
 * 955,500-chunk space with 45 million postings raised query-service's RSS by 1.3–2 GB,
 * docs/performance.md "Search at a million chunks"); a posting 8 bytes.
 */
const SHARE = 0.25;
const CHUNK_BYTES = 1_500;
const POSTING_BYTES = 8;

/** The limits `auto` picks for a process that may use `memoryBytes`, never below the floor. */
export function lexicalMemoryLimits(memoryBytes: number): LexicalMemoryLimits {
  const half = (memoryBytes * SHARE) / 2;
  return {
    chunks: Math.max(LEXICAL_MEMORY_FLOOR.chunks, Math.floor(half / CHUNK_BYTES)),
    postings: Math.max(LEXICAL_MEMORY_FLOOR.postings, Math.floor(half / POSTING_BYTES)),
  };
}

/** The memory this process may use: its cgroup's limit (a container's) when set, else the machine's. */
export function processMemoryBytes(): number {
  const limit = constrainedMemory();
  const machine = totalmem();
  return limit > 0 && limit < machine ? limit : machine;
}
