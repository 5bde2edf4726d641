import type { IndexSpace } from '@kb/contracts';

import type { FeedbackCap } from './bm25-rank';
import type { LexemePostings, LexicalIndex, SpaceChunk } from './lexical-index';
import type { ReferenceStatistics } from './sparse/reference-statistics';

/** What a snapshot is built from: the Postgres index (`PgLexicalIndex`). */
export interface SnapshotSource extends LexicalIndex {
  spaceChunks(space: IndexSpace): Promise<SpaceChunk[]>;
  postingsOf(space: IndexSpace, lexemes: string[]): Promise<LexemePostings[]>;
  analyze(text: string): Promise<string[]>;
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
  /**
   * A space whose last snapshot held at least this many chunks waits for its next one rather than
   * going to Postgres (default WAIT_FOR_BUILD_FROM; snapshot-lexical-index.ts).
   */
  waitForBuildFrom?: number;
  /**
   * `LEXICAL_IDF=reference` (docs/adr/0056): idf and mean length from these, not counted over the
   * caller's readable chunks. Searches Postgres answers keep the readable statistics.
   */
  reference?: ReferenceStatistics | undefined;
  /** With `reference` (`LEXICAL_IDF=tenant`): blend in the chunks everyone may read (space-snapshot.ts). */
  tenantWide?: boolean | undefined;
  /** What feedback terms may cost (bm25-rank.ts; default FEEDBACK_CAP); null: uncapped. */
  feedbackCap?: FeedbackCap | null | undefined;
  /** From this many chunks a snapshot scores by windows (docs/adr/0060; default WINDOWED_FROM). */
  windowedFrom?: number | undefined;
  /** Told when a snapshot is ready: its chunks and how long reading and building it took. */
  onBuilt?: (space: IndexSpace, chunks: number, ms: number) => void;
  /** Told when reading a space's chunks for a snapshot failed (its searches go to Postgres). */
  onBuildFailed?: (space: IndexSpace, error: unknown) => void;
  /**
   * Told when a new snapshot could not take the last one's posting lists over because the new
   * chunks' postings could not be read (docs/adr/0061): it is built, and reads its lists cold.
   */
  onCarryFailed?: (space: IndexSpace, error: unknown) => void;
  /** Told how each search was answered: `memory` (a snapshot) or `index` (Postgres). */
  onSearch?: (path: 'memory' | 'index') => void;
  now?: () => number;
}
