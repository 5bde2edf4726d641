/** How query-service answered BM25 so far, from its /metrics (`kb_lexical_*`). */
export interface LexicalPaths {
  /** Searches answered by an in-memory snapshot and by Postgres. */
  memory: number;
  index: number;
  /** Snapshots built, and the time they took together (read and build), in ms. */
  builds: number;
  build_ms: number;
}

export async function lexicalPaths(queryUrl: string): Promise<LexicalPaths> {
  return lexicalPathsIn(await (await fetch(new URL('/metrics', queryUrl))).text());
}

/** The figures of `LexicalPaths` in a Prometheus text exposition. */
export function lexicalPathsIn(text: string): LexicalPaths {
  const sum = (prefix: string, label?: string): number => {
    let total = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith(prefix) || (label && !line.includes(label))) continue;
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return total;
  };
  return {
    memory: sum('kb_lexical_searches_total{', 'path="memory"'),
    index: sum('kb_lexical_searches_total{', 'path="index"'),
    builds: sum('kb_lexical_snapshot_build_ms_count'),
    build_ms: Math.round(sum('kb_lexical_snapshot_build_ms_sum')),
  };
}

/** What a warm start took up (query-service's readiness details, docs/adr/0062). */
export interface WarmStart {
  state: string;
  spaces: number;
  lists: number;
  ms?: number;
}

/** The warm start query-service reports, or undefined when it reports none. */
export async function warmStartOf(queryUrl: string): Promise<WarmStart | undefined> {
  const response = await fetch(new URL('/health/ready', queryUrl));
  const body = (await response.json()) as { details?: { lexical_warm?: WarmStart } };
  return body.details?.lexical_warm;
}

export const pathsBetween = (before: LexicalPaths, after: LexicalPaths): LexicalPaths => ({
  memory: after.memory - before.memory,
  index: after.index - before.index,
  builds: after.builds - before.builds,
  build_ms: after.build_ms - before.build_ms,
});

/**
 * Waits (up to `timeoutMs`) until a search of the tenant is answered in memory: the snapshot a
 * first search starts is built in the background while Postgres answers, and a bench of the
 * in-memory path must not time the Postgres one meanwhile. `search` runs one new (uncached) search.
 */
export async function untilInMemory(
  queryUrl: string,
  search: () => Promise<unknown>,
  log: (line: string) => void,
  timeoutMs = 15 * 60_000,
): Promise<{ waited_ms: number } | undefined> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const before = await lexicalPaths(queryUrl);
    await search().catch(() => undefined);
    const after = await lexicalPaths(queryUrl);
    if (after.memory > before.memory) return { waited_ms: Date.now() - started };
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  log(`no search was answered in memory within ${timeoutMs / 1000} s`);
  return undefined;
}
