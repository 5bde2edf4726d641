import { type PostingList, postingList } from './bm25-rank';
import type { ChunkRef, LexemePostings, TermVector } from './lexical-index';
import type { SpaceSnapshot } from './space-snapshot';

/** A lexeme no chunk of the space holds (shared: lists are never written once made). */
const EMPTY_LIST: PostingList = postingList({ ordinals: [], tfs: [] });

/**
 * At most this many chunks new since a space's last snapshot for the next one to carry its lists
 * over: their postings are read at the build, about fifty rows a chunk. Past it (a bulk load, a
 * new chunker) the next snapshot reads its lists cold.
 */
export const CARRIED_NEW_CHUNKS = 10_000;

/** Postings read from Postgres as lists per lexeme in the snapshot (none: empty); chunks it does not hold skipped. */
export function coldLists(
  snapshot: SpaceSnapshot,
  lexemes: string[],
  read: LexemePostings[],
): Map<string, PostingList> {
  const lists = new Map(lexemes.map((lexeme) => [lexeme, EMPTY_LIST]));
  for (const { lexeme, chunks, tfs } of read) {
    if (!lists.has(lexeme)) continue;
    const ordinals: number[] = [];
    const counts: number[] = [];
    for (let i = 0; i < chunks.length; i++) {
      const o = snapshot.ordinalOf(chunks[i]!);
      if (o === undefined) continue;
      ordinals.push(o);
      counts.push(tfs[i]!);
    }
    lists.set(lexeme, postingList({ ordinals, tfs: counts }));
  }
  return lists;
}

/**
 * What a snapshot takes over from its space's last one (docs/adr/0061): a chunk's postings are
 * fixed by its identity (a new text is a new version, chunk-content-cache.ts), so a list the last
 * snapshot read holds for the next one once its chunks are renumbered, the chunks gone dropped
 * and the new ones' postings merged in. Those are read once, at the build, by chunk.
 */
export class CarriedPostings {
  private constructor(
    /** The last snapshot's id, under which its lists are held. */
    readonly from: number,
    private readonly remap: Int32Array,
    private readonly added: Map<string, { ordinals: number[]; tfs: number[] }>,
  ) {}

  /**
   * What `next` carries from `previous`; undefined past `atMost` new chunks. `termVectors` reads
   * the new chunks' postings.
   */
  static async between(
    previous: SpaceSnapshot,
    next: SpaceSnapshot,
    termVectors: (chunks: ChunkRef[]) => Promise<Map<string, TermVector>>,
    atMost = CARRIED_NEW_CHUNKS,
  ): Promise<CarriedPostings | undefined> {
    const { remap, added } = next.renumbering(previous);
    if (added.length > atMost) return undefined;
    const vectors = added.length === 0 ? new Map() : await termVectors(added.map(next.refOf, next));
    const lists = new Map<string, { ordinals: number[]; tfs: number[] }>();
    // In ascending ordinal order, so each lexeme's additions are too.
    for (const o of added) {
      const vector = vectors.get(next.keyOf(o));
      if (!vector) continue;
      for (const [lexeme, tf] of vector.terms) {
        let list = lists.get(lexeme);
        if (!list) lists.set(lexeme, (list = { ordinals: [], tfs: [] }));
        list.ordinals.push(o);
        list.tfs.push(tf);
      }
    }
    return new CarriedPostings(previous.id, remap, lists);
  }

  /** `held`, the last snapshot's list of `lexeme`, in the new snapshot: renumbered, merged. */
  list(lexeme: string, held: PostingList): PostingList {
    const added = this.added.get(lexeme) ?? { ordinals: [], tfs: [] };
    const ordinals = new Int32Array(held.size + added.ordinals.length);
    const tfs = new Int32Array(ordinals.length);
    let size = 0;
    let a = 0;
    for (let i = 0; i < held.size; i++) {
      const o = this.remap[held.ordinals[i]!]!;
      if (o < 0) continue;
      for (; a < added.ordinals.length && added.ordinals[a]! < o; a++, size++) {
        ordinals[size] = added.ordinals[a]!;
        tfs[size] = added.tfs[a]!;
      }
      ordinals[size] = o;
      tfs[size++] = held.tfs[i]!;
    }
    for (; a < added.ordinals.length; a++, size++) {
      ordinals[size] = added.ordinals[a]!;
      tfs[size] = added.tfs[a]!;
    }
    // Ascending when both snapshots list chunks in key order (`spaceChunks`); sorted if not.
    return postingList({ ordinals: ordinals.subarray(0, size), tfs: tfs.subarray(0, size) });
  }
}

/**
 * The posting lists read for snapshots, by snapshot and lexeme, least recently used evicted
 * first once more than `maxPostings` postings are held; and what each snapshot may carry over
 * from its space's last one, taken list by list as searches ask.
 */
export class HeldPostingLists {
  /** By `<snapshot id>\u0000<lexeme>`, least recently used first. */
  private readonly lists = new Map<string, PostingList>();
  private readonly carried = new WeakMap<SpaceSnapshot, CarriedPostings>();
  private held = 0;

  constructor(private readonly maxPostings: number) {}

  carry(snapshot: SpaceSnapshot, carried: CarriedPostings): void {
    this.carried.set(snapshot, carried);
  }

  /** The lists held for these lexemes in the snapshot, or carried into it; the others absent. */
  of(snapshot: SpaceSnapshot, lexemes: string[]): Map<string, PostingList> {
    const found = new Map<string, PostingList>();
    const carried = this.carried.get(snapshot);
    for (const lexeme of lexemes) {
      const key = `${snapshot.id}\u0000${lexeme}`;
      let list = this.lists.get(key);
      if (list) {
        this.lists.delete(key);
        this.lists.set(key, list);
      } else if (carried) {
        const before = `${carried.from}\u0000${lexeme}`;
        const last = this.lists.get(before);
        if (!last) continue;
        list = carried.list(lexeme, last);
        this.lists.delete(before);
        this.held -= last.size;
        this.hold(snapshot, new Map([[lexeme, list]]));
      } else {
        continue;
      }
      found.set(lexeme, list);
    }
    return found;
  }

  /**
   * The lexemes whose lists are held for the snapshot, or for the one it carries from, the most
   * recently used first (docs/adr/0062).
   */
  lexemesOf(snapshot: SpaceSnapshot): string[] {
    const owners = new Set([String(snapshot.id), String(this.carried.get(snapshot)?.from)]);
    const keys = [...this.lists.keys()];
    const lexemes = new Set<string>();
    for (let i = keys.length - 1; i >= 0; i--) {
      const cut = keys[i]!.indexOf('\u0000');
      if (owners.has(keys[i]!.slice(0, cut))) lexemes.add(keys[i]!.slice(cut + 1));
    }
    return [...lexemes];
  }

  /** Lists read for the snapshot, held from now on. */
  hold(snapshot: SpaceSnapshot, lists: Map<string, PostingList>): void {
    for (const [lexeme, list] of lists) {
      const key = `${snapshot.id}\u0000${lexeme}`;
      const before = this.lists.get(key);
      if (before) this.held -= before.size;
      this.lists.delete(key);
      this.lists.set(key, list);
      this.held += list.size;
    }
    for (const [key, list] of this.lists) {
      if (this.held <= this.maxPostings) break;
      this.lists.delete(key);
      this.held -= list.size;
    }
  }
}
