import type { IndexSpace } from '@kb/contracts';
import type { WarmSpace } from '@kb/lexical-index';

import { lexicalWarmCheck, LexicalWarmStart } from './lexical-warm-start';

/** Redis as a map, with what each write asked for its lifetime. */
class MapStore {
  readonly values = new Map<string, string>();
  readonly ttls: Array<number | undefined> = [];
  get = async (key: string) => this.values.get(key);
  set = async (key: string, value: string, ttlSeconds?: number) => {
    this.values.set(key, value);
    this.ttls.push(ttlSeconds);
  };
}

/** An index that records what it was asked to warm and holds `holding`. */
function index(holding: WarmSpace[] = [], warm = async (_space: IndexSpace) => true) {
  const warmed: Array<[string, string[]]> = [];
  return {
    warmed,
    warm: jest.fn(async (space: IndexSpace, lexemes: string[]) => {
      warmed.push([space, lexemes]);
      return warm(space);
    }),
    warmSet: jest.fn(() => holding),
  };
}

const WARM_SET_KEY = 'kb:lexical:warm:v1:test';
const config = {
  LEXICAL_WARM_TIMEOUT_MS: 5_000,
  LEXICAL_WARM_SAVE_INTERVAL_MS: 60_000,
  LEXICAL_WARM_KEY: WARM_SET_KEY,
};
const saved = (spaces: Array<{ space: string; lexemes: string[] }>) =>
  JSON.stringify({ savedAt: '2026-11-28T00:00:00Z', spaces });

describe('LexicalWarmStart', () => {
  it('takes up the saved spaces in order and is ready only once they are held', async () => {
    const store = new MapStore();
    store.values.set(
      WARM_SET_KEY,
      saved([
        { space: 'acme', lexemes: ['crane', 'harbour'] },
        { space: 'acme~0123456789ab', lexemes: ['tide'] },
        { space: 'gone', lexemes: ['ship'] },
      ]),
    );
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const lexical = index([], async (space) => {
      await held;
      return space !== 'gone';
    });
    const warm = new LexicalWarmStart(lexical, store, config);
    const check = lexicalWarmCheck(warm);
    warm.onApplicationBootstrap();
    await expect(check.check()).rejects.toThrow('taking up the lexical index');
    release();
    await warm.whenReady;
    await expect(check.check()).resolves.toBe(true);
    expect(lexical.warmed).toEqual([
      ['acme', ['crane', 'harbour']],
      ['acme~0123456789ab', ['tide']],
      ['gone', ['ship']],
    ]);
    expect(check.details()).toMatchObject({ state: 'warm', spaces: 2, lists: 3 });
    await warm.beforeApplicationShutdown();
  });

  it('writes down what it holds at shutdown, for a week, and never an empty set', async () => {
    const store = new MapStore();
    const holding: WarmSpace[] = [];
    const warm = new LexicalWarmStart(index(holding), store, config);
    warm.onApplicationBootstrap();
    await warm.whenReady;
    await warm.beforeApplicationShutdown();
    expect(store.values.has(WARM_SET_KEY)).toBe(false);

    holding.push({ space: 'acme' as IndexSpace, lexemes: ['crane'] });
    const next = new LexicalWarmStart(index(holding), store, config);
    next.onApplicationBootstrap();
    await next.whenReady;
    await next.beforeApplicationShutdown();
    expect(JSON.parse(store.values.get(WARM_SET_KEY)!)).toMatchObject({ spaces: holding });
    expect(store.ttls).toEqual([7 * 24 * 3_600]);
  });

  it('is ready past its time while a space is still being warmed, and saves no part of a set', async () => {
    const store = new MapStore();
    store.values.set(WARM_SET_KEY, saved([{ space: 'acme', lexemes: ['crane'] }]));
    const lexical = index(
      [{ space: 'other' as IndexSpace, lexemes: ['x'] }],
      () => new Promise<boolean>(() => undefined),
    );
    const warm = new LexicalWarmStart(lexical, store, { ...config, LEXICAL_WARM_TIMEOUT_MS: 20 });
    const before = store.values.get(WARM_SET_KEY);
    warm.onApplicationBootstrap();
    while (lexical.warmed.length === 0) await new Promise((resolve) => setImmediate(resolve));
    expect(warm.ready).toBe(false);
    // A shutdown while warming leaves the last set as it was: this one holds only a part of it.
    await warm.beforeApplicationShutdown();
    expect(store.values.get(WARM_SET_KEY)).toBe(before);
    await warm.whenReady;
    expect(warm.describe()).toMatchObject({ state: 'timed_out', spaces: 0 });
    expect(warm.ready).toBe(true);
  });

  it('starts cold, and ready, when the saved set is unreadable', async () => {
    const store = new MapStore();
    store.values.set(WARM_SET_KEY, '{"spaces": "not a list"}');
    const lexical = index();
    const warm = new LexicalWarmStart(lexical, store, config);
    warm.onApplicationBootstrap();
    await warm.whenReady;
    expect(warm.ready).toBe(true);
    expect(lexical.warm).not.toHaveBeenCalled();
  });

  it('is off without Redis, with an index that holds nothing in memory, or with a timeout of 0', async () => {
    const store = new MapStore();
    store.values.set(WARM_SET_KEY, saved([{ space: 'acme', lexemes: ['crane'] }]));
    const lexical = index();
    for (const warm of [
      new LexicalWarmStart(lexical, null, config),
      new LexicalWarmStart({}, store, config),
      new LexicalWarmStart(lexical, store, { ...config, LEXICAL_WARM_TIMEOUT_MS: 0 }),
    ]) {
      warm.onApplicationBootstrap();
      await warm.whenReady;
      expect(warm.describe().state).toBe('off');
      await warm.beforeApplicationShutdown();
    }
    expect(lexical.warm).not.toHaveBeenCalled();
    expect(lexical.warmSet).not.toHaveBeenCalled();
  });
});
