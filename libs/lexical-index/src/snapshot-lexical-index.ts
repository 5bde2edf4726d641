import {
  type EditableAttributes,
  type FilterableFields,
  type IndexSpace,
  matchesFilter,
} from '@kb/contracts';

import type {
  ChunkLocation,
  ChunkRef,
  LexicalIndex,
  LexicalMatch,
  LexicalQuery,
  LexicalRecord,
  LexicalWrite,
  Posting,
  SpaceChunk,
  TermVector,
} from './lexical-index';
import { parseLexicalQuery } from './lexical-query.parser';
import { BM25_B, BM25_K1 } from './pg-lexical-index';

/** What a snapshot is built from: the Postgres index (`PgLexicalIndex`). */
export interface SnapshotSource extends LexicalIndex {
  spaceChunks(space: IndexSpace): Promise<SpaceChunk[]>;
  postingsOf(space: IndexSpace, lexemes: string[]): Promise<Posting[]>;
  analyze(text: string): Promise<string[]>;
  texts(
    space: IndexSpace,
    chunks: ChunkRef[],
  ): Promise<Map<string, { title: string; text: string }>>;
}

export interface SnapshotOptions {
  /**
   * The space's index generation, which indexing bumps after every change to what search can
   * return; undefined when it cannot be read (the search then goes to Postgres).
   */
  generation(space: IndexSpace): Promise<number | undefined>;
  /**
   * Chunks held across all snapshots (default 250,000, about 240 bytes each); a larger space is
   * searched in Postgres.
   */
  maxChunks?: number;
  /** Postings held across all snapshots (default 4,000,000, 8 bytes each), least recently used lexemes evicted first. */
  maxPostings?: number;
  /**
   * True: a search with no snapshot at the current generation waits for one to be built (tests).
   * False (default): it is answered by Postgres while the snapshot is built behind it.
   */
  waitForSnapshot?: boolean;
  /** Told how each search was answered: `memory` (a snapshot) or `index` (Postgres). */
  onSearch?: (path: 'memory' | 'index') => void;
  now?: () => number;
}

/** A build may start again only after this many times its last duration (under constant writes, builds take at most a fifth of the time). */
const BUILD_BACKOFF = 4;
/** How long a space too large to hold is not tried again. */
const OVERSIZED_RETRY_MS = 10 * 60_000;
const ANALYSES = 2_000;
const READER_SETS = 32;

/**
 * BM25 in memory over a snapshot of each space, taken at the space's index generation
 * (docs/adr/0029, seventh pass). In Postgres, each search scanned the space's readable chunks for
 * N and avgdl and joined every posting of its terms with them: 5–13 ms per pass on a CISI-sized
 * space, growing with the space, twice per hybrid search (RM3). Here the chunk list (lengths,
 * readers, knowledge bases), each lexeme's postings once read, and each principal set's readable
 * chunks are kept per generation, and a search is arithmetic over arrays.
 *
 * Correctness rests on the generation, as the result cache's does: everything held was read after
 * the generation it is filed under was read, and a search uses it only while that generation is
 * still current, so a bump (every write, ACL change and removal makes one) retires it at once.
 * Scores are the same BM25 as Postgres computes (same statistics over the caller's readable
 * chunks, same formula and order of operations; sums may differ in the last bit), and filters are
 * checked with the reference semantics the SQL reproduces (`matchesFilter`). Searches with typed
 * syntax (phrases, operators, exclusions) or identifiers, whose checks need the chunk text, go to
 * Postgres unchanged. Writes and the other reads are passed through.
 */
export class SnapshotLexicalIndex implements LexicalIndex {
  private readonly snapshots = new Map<IndexSpace, SpaceSnapshot>();
  private readonly builds = new Map<IndexSpace, Promise<SpaceSnapshot | undefined>>();
  private readonly lastBuild = new Map<IndexSpace, { endedAt: number; took: number }>();
  private readonly oversized = new Map<IndexSpace, number>();
  /** Postings lists by `<snapshot id>\u0000<lexeme>`, least recently used first. */
  private readonly postings = new Map<string, PostingList>();
  private postingsHeld = 0;
  private readonly analyses = new Map<string, string[]>();
  private nextSnapshotId = 1;
  private readonly maxChunks: number;
  private readonly maxPostings: number;
  private readonly now: () => number;

  constructor(
    private readonly source: SnapshotSource,
    private readonly options: SnapshotOptions,
  ) {
    this.maxChunks = options.maxChunks ?? 250_000;
    this.maxPostings = options.maxPostings ?? 4_000_000;
    this.now = options.now ?? Date.now;
  }

  async search(space: IndexSpace, query: LexicalQuery): Promise<LexicalMatch[]> {
    const parsed = parseLexicalQuery(query.text);
    const inMemory = !parsed.constraint && parsed.preferred.length === 0;
    const snapshot = inMemory ? await this.snapshotOf(space) : undefined;
    if (!snapshot) {
      this.options.onSearch?.('index');
      return this.source.search(space, query);
    }
    const weights = new Map<string, number>();
    const lexemes = await this.analyzed(parsed.scoringText);
    const expansion = query.expansion;
    const own = expansion ? expansion.queryWeight / Math.max(lexemes.length, 1) : 1;
    for (const lexeme of lexemes) weights.set(lexeme, own);
    for (const term of expansion?.terms ?? []) {
      weights.set(term.lexeme, (weights.get(term.lexeme) ?? 0) + term.weight);
    }
    const lists = await this.postingsFor(space, snapshot, [...weights.keys()]);
    const ranked = snapshot.rank(weights, lists, query).map(({ ordinal, score }) => ({
      ...snapshot.chunk(ordinal),
      score,
    }));
    this.options.onSearch?.('memory');
    const texts =
      query.withText === false
        ? undefined
        : await this.source.texts(
            space,
            ranked.map((r) => r.ref),
          );
    return ranked.flatMap(({ ref, key, startOffset, endOffset, score }) => {
      const text = texts ? texts.get(key) : { title: '', text: '' };
      // A chunk removed since the snapshot (its bump not yet made) is left out, as Postgres would.
      if (!text) return [];
      return [{ ...ref, ...text, startOffset, endOffset, score }];
    });
  }

  /**
   * The space's snapshot at its current generation, or undefined (Postgres answers): none built
   * yet (one is started), the generation unreadable, or the space too large to hold.
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
    return this.options.waitForSnapshot ? await build : undefined;
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
      .then((rows) => {
        if (rows.length > this.maxChunks) {
          this.oversized.set(space, this.now());
          return undefined;
        }
        this.oversized.delete(space);
        const snapshot = new SpaceSnapshot(this.nextSnapshotId++, generation, rows);
        this.snapshots.delete(space);
        this.snapshots.set(space, snapshot);
        this.evictSnapshots();
        return snapshot;
      })
      // A failed build is retried by a later search; this one is answered by Postgres.
      .catch(() => undefined)
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

  /** Each lexeme's postings in the snapshot; those not held yet are read in one query. */
  private async postingsFor(
    space: IndexSpace,
    snapshot: SpaceSnapshot,
    lexemes: string[],
  ): Promise<Map<string, PostingList>> {
    const lists = new Map<string, PostingList>();
    const missing: string[] = [];
    for (const lexeme of lexemes) {
      const key = `${snapshot.id}\u0000${lexeme}`;
      const list = this.postings.get(key);
      if (list) {
        this.postings.delete(key);
        this.postings.set(key, list);
        lists.set(lexeme, list);
      } else {
        missing.push(lexeme);
      }
    }
    if (missing.length === 0) return lists;
    const read = snapshot.postingLists(missing, await this.source.postingsOf(space, missing));
    for (const [lexeme, list] of read) {
      lists.set(lexeme, list);
      const key = `${snapshot.id}\u0000${lexeme}`;
      const before = this.postings.get(key);
      if (before) this.postingsHeld -= before.size;
      this.postings.delete(key);
      this.postings.set(key, list);
      this.postingsHeld += list.size;
    }
    for (const [key, list] of this.postings) {
      if (this.postingsHeld <= this.maxPostings) break;
      this.postings.delete(key);
      this.postingsHeld -= list.size;
    }
    return lists;
  }

  upsert(space: IndexSpace, records: LexicalWrite[]): Promise<void> {
    return this.source.upsert(space, records);
  }

  deleteDocument(space: IndexSpace, documentId: string, olderThan?: number): Promise<number> {
    return this.source.deleteDocument(space, documentId, olderThan);
  }

  deleteDocuments(space: IndexSpace, documentIds: string[]): Promise<number> {
    return this.source.deleteDocuments(space, documentIds);
  }

  documentVersions(space: IndexSpace): AsyncIterable<{ documentId: string; versions: number[] }> {
    return this.source.documentVersions(space);
  }

  setAttributes(
    space: IndexSpace,
    documentId: string,
    attributes: EditableAttributes,
  ): Promise<number> {
    return this.source.setAttributes(space, documentId, attributes);
  }

  setPrincipals(space: IndexSpace, documentId: string, principals: string[]): Promise<number> {
    return this.source.setPrincipals(space, documentId, principals);
  }

  countDocument(space: IndexSpace, documentId: string): Promise<number> {
    return this.source.countDocument(space, documentId);
  }

  locations(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, ChunkLocation>> {
    return this.source.locations(space, chunks);
  }

  termVectors(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, TermVector>> {
    return this.source.termVectors(space, chunks);
  }

  matching(space: IndexSpace, query: string, chunks: ChunkRef[]): Promise<Set<string>> {
    return this.source.matching(space, query, chunks);
  }

  chunksAround(space: IndexSpace, anchors: ChunkRef[], radius: number): Promise<LexicalRecord[]> {
    return this.source.chunksAround(space, anchors, radius);
  }

  ping(): Promise<void> {
    return this.source.ping();
  }

  close(): Promise<void> {
    return this.source.close();
  }
}

/** One lexeme's postings in a snapshot: chunk ordinals and counts. */
interface PostingList {
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
class SpaceSnapshot {
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
