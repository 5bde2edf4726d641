import { toIndexSpace } from '@kb/contracts';
import { NotReadyError } from '@kb/http';
import type { LexicalIndex } from '@kb/lexical-index';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { z } from 'zod';

import type { SearchCache } from '../cache/search.cache';
import { QUERY_CONFIG, type QueryConfig } from '../config/query.config';
import { LEXICAL_INDEX, SEARCH_CACHE } from '../platform/tokens';

/** A process started later than this after the last write starts cold. */
const WARM_SET_TTL_SECONDS = 7 * 24 * 3_600;
/** What is written down at most: spaces, and lexemes a space. */
export const WARM_SET_LIMITS = { spaces: 64, lexemes: 20_000 };

const warmSetSchema = z.object({
  savedAt: z.string(),
  spaces: z
    .array(z.object({ space: z.string().min(1), lexemes: z.array(z.string().min(1)) }))
    .max(WARM_SET_LIMITS.spaces),
});

export type WarmState = 'off' | 'warming' | 'warm' | 'timed_out';

/** What readiness tells about the warm start. */
export interface WarmReport {
  state: WarmState;
  spaces: number;
  lists: number;
  ms?: number;
}

/**
 * A new process takes up what the last one held in memory before it reports ready (docs/adr/0062):
 * each space's BM25 snapshot and the posting lists its searches read, so its first searches do not
 * wait for a build and read common lists cold (at a million chunks, 43 of 76 first searches passed
 * the 5 s deadline). What it holds is written to Redis every `LEXICAL_WARM_SAVE_INTERVAL_MS` and at
 * shutdown; at start it is read back and warmed, the most recently searched space first, within
 * `LEXICAL_WARM_TIMEOUT_MS`: past that the process is ready anyway and warms on behind its
 * searches. Off without Redis, with an index that holds nothing in memory, or with a timeout of 0.
 */
@Injectable()
export class LexicalWarmStart implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(LexicalWarmStart.name);
  private readonly report: WarmReport = { state: 'off', spaces: 0, lists: 0 };
  private saving?: NodeJS.Timeout;
  private stopped = false;
  /** Resolves when the warm start has ended: warm, timed out, or off. */
  whenReady = Promise.resolve();

  constructor(
    @Inject(LEXICAL_INDEX) private readonly lexical: Pick<LexicalIndex, 'warm' | 'warmSet'>,
    @Inject(SEARCH_CACHE) private readonly store: Pick<SearchCache, 'get' | 'set'> | null,
    @Inject(QUERY_CONFIG)
    private readonly config: Pick<
      QueryConfig,
      'LEXICAL_WARM_TIMEOUT_MS' | 'LEXICAL_WARM_SAVE_INTERVAL_MS' | 'LEXICAL_WARM_KEY'
    >,
  ) {}

  /** False only while warming within its time. */
  get ready(): boolean {
    return this.report.state !== 'warming';
  }

  describe(): WarmReport {
    return { ...this.report };
  }

  onApplicationBootstrap(): void {
    if (!this.store || !this.lexical.warm || !this.lexical.warmSet) return;
    if (this.config.LEXICAL_WARM_TIMEOUT_MS === 0) return;
    this.saving = setInterval(() => void this.save(), this.config.LEXICAL_WARM_SAVE_INTERVAL_MS);
    this.saving.unref();
    this.report.state = 'warming';
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<WarmState>((resolve) => {
      timer = setTimeout(() => resolve('timed_out'), this.config.LEXICAL_WARM_TIMEOUT_MS);
    });
    const warmed = this.takeUp().then(
      (): WarmState => 'warm',
      (error: unknown): WarmState => {
        this.logger.warn(`lexical warm start failed, searches start cold: ${String(error)}`);
        return 'warm';
      },
    );
    this.whenReady = Promise.race([warmed, timedOut]).then((state) => {
      clearTimeout(timer);
      this.report.state = state;
      this.report.ms = Math.round(performance.now() - started);
      const { spaces, lists, ms } = this.report;
      this.logger.log(
        state === 'warm'
          ? `lexical index warm: ${spaces} spaces, ${lists} posting lists in ${ms} ms`
          : `lexical index still warming after ${ms} ms (${spaces} spaces so far): ready, warming on`,
      );
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.saving);
    this.stopped = true;
    await this.save();
  }

  /** The last process's warm set, taken up space by space, the most recently searched first. */
  private async takeUp(): Promise<void> {
    const raw = await this.store!.get(this.config.LEXICAL_WARM_KEY);
    if (raw === undefined) return;
    const saved = warmSetSchema.parse(JSON.parse(raw));
    for (const { space, lexemes } of saved.spaces) {
      if (this.stopped) return;
      if (await this.lexical.warm!(toIndexSpace(space), lexemes)) {
        this.report.spaces++;
        this.report.lists += lexemes.length;
      }
    }
  }

  /**
   * What this process holds, for the next one. Not while it is taking up the last set within its
   * time (it would write a part of it); once past that time, what it holds by then, searches
   * included. Never an empty set over another replica's.
   */
  private async save(): Promise<void> {
    if (this.report.state === 'warming' || this.report.state === 'off') return;
    const spaces = this.lexical.warmSet!(WARM_SET_LIMITS);
    if (spaces.length === 0) return;
    const value = JSON.stringify({ savedAt: new Date().toISOString(), spaces });
    await this.store!.set(this.config.LEXICAL_WARM_KEY, value, WARM_SET_TTL_SECONDS);
  }
}

/** The readiness check: not ready while the warm start runs within its time. */
export const lexicalWarmCheck = (warm: LexicalWarmStart) => ({
  name: 'lexical_warm',
  check: async () => {
    if (!warm.ready) throw new NotReadyError('taking up the lexical index the last process held');
    return true;
  },
  details: () => warm.describe(),
});
