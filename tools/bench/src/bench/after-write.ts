import type { KbClient } from '@kb/kb-cli/api';

import { type LatencySummary, measure } from './latency';

/** How long the written document may take to be indexed. */
const INDEXED_WITHIN_MS = 180_000;

export interface AfterWrite {
  /** From the upload until the document was indexed (the generation moved on). */
  indexed_ms: number;
  /** From then until a search was answered by the new snapshot (`settle`). */
  in_memory_ms?: number;
  /** Every query once, all misses, at c4, on the new snapshot. */
  c4: LatencySummary & { failed: number };
}

/**
 * The first searches after a write (issue 40, docs/adr/0061): a document uploaded to the benched
 * tenant and indexed moves its space's generation on, so query-service builds the space's
 * snapshot again. `settle` waits until the new snapshot answers; then every query once at c4, as
 * `warm_up` does on the first snapshot, but now the last snapshot had read the queries' posting
 * lists, which the new one takes over (or reads again, cold). The document is deleted after, and
 * that snapshot settled too.
 */
export async function afterWrite(
  admin: KbClient,
  searches: Array<() => Promise<unknown>>,
  settle: () => Promise<{ waited_ms: number } | undefined>,
): Promise<AfterWrite> {
  const started = performance.now();
  // A text of its own each run: an upload of a text already held is a duplicate, not a write.
  const text = `Harbour cranes unload cargo at the quay while the tide turns (${new Date().toISOString()}).`;
  const { id } = await admin.upload(`after-write-${Date.now()}.txt`, text, {
    title: 'A write during the benchmark',
    acl: { tenant: true },
  });
  try {
    for (;;) {
      const { status } = await admin.getDocument(id);
      if (status === 'indexed') break;
      if (status === 'failed' || performance.now() - started > INDEXED_WITHIN_MS) {
        throw new Error(`the benchmark's written document ${id} was not indexed (${status})`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const indexed_ms = Math.round(performance.now() - started);
    const settled = await settle();
    let failed = 0;
    const c4 = await measure(
      searches.map((search) => async () => {
        await search().catch(() => failed++);
      }),
      4,
    );
    return {
      indexed_ms,
      ...(settled ? { in_memory_ms: settled.waited_ms } : {}),
      c4: { ...c4, failed },
    };
  } finally {
    // The removal is a write too, indexed behind the answer: the passes after this one start
    // once search no longer finds the document, on the settled snapshot.
    await admin.tryDelete(id);
    for (let i = 0; i < 120; i++) {
      const found = await admin.search({ query: text, topK: 5 }).catch(() => undefined);
      if (found && !found.hits.some((hit) => hit.documentId === id)) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await settle();
  }
}
