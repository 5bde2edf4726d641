import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { basename } from 'node:path';

import { kbv1 } from '@kb/contracts';

import { KbClient, type KbEndpoints, localToken, mapPool } from '../client/kb-client';
import { loadBeir } from './beir';
import { evaluate, type Ranking } from './metrics';

export type EvalMode = 'hybrid' | 'semantic' | 'lexical';

export interface EvalOptions extends Omit<KbEndpoints, 'token'> {
  dataset: string;
  modes: EvalMode[];
  runOut?: string;
  /** Reuse a tenant that already holds this corpus instead of ingesting it again. */
  tenant?: string;
  concurrency: number;
  log: (line: string) => void;
}

const GRPC_MODE: Record<EvalMode, kbv1.SearchMode> = {
  hybrid: kbv1.SearchMode.SEARCH_MODE_HYBRID,
  semantic: kbv1.SearchMode.SEARCH_MODE_SEMANTIC,
  lexical: kbv1.SearchMode.SEARCH_MODE_LEXICAL,
};

/**
 * BEIR evaluation through the public APIs: ingest every corpus entry as one document over REST
 * into a fresh knowledge base (its `_id` kept as metadata `externalId`), wait until all are
 * indexed, run every query through gRPC Search scoped to that knowledge base for 100 chunks, keep
 * each document's best chunk, and score the ranking.
 * Prints one JSON line per mode; writes a TREC run file per mode when asked.
 */
export async function runEval(options: EvalOptions): Promise<void> {
  const dataset = await loadBeir(options.dataset);
  const tenant = options.tenant ?? `eval-${randomUUID().slice(0, 8)}`;
  // A tenant admin: the evaluation measures ranking, not access control.
  const token = await localToken({ tenant, user: 'eval', roles: ['admin'] });
  const client = new KbClient({ ...options, token });
  const knowledgeBaseId = `${basename(options.dataset)}-${randomUUID().slice(0, 8)}`;
  try {
    if (!options.tenant) {
      await client.createKnowledgeBase(knowledgeBaseId, `${basename(options.dataset)} evaluation`);
      await ingest(client, dataset.corpus, { ...options, knowledgeBaseId });
    }
    const externalIds = await waitIndexed(client, dataset.corpus, options.log);
    for (const mode of options.modes) {
      const rankings = new Map<string, Ranking>();
      const scores = new Map<string, number[]>();
      const started = performance.now();
      await mapPool(dataset.queries, 4, async (query) => {
        const response = await client.search({
          query: query.text,
          topK: 100,
          mode: GRPC_MODE[mode],
          // A reused tenant holds the corpus in an earlier run's knowledge base: search them all.
          knowledgeBaseIds: options.tenant ? [] : [knowledgeBaseId],
        });
        const seen = new Map<string, number>();
        for (const hit of response.hits) {
          // Corpus entries with identical text share one document (duplicate detection).
          for (const externalId of externalIds.get(hit.documentId) ?? []) {
            if (!seen.has(externalId)) seen.set(externalId, hit.score);
          }
        }
        rankings.set(query._id, [...seen.keys()]);
        scores.set(query._id, [...seen.values()]);
      });
      const elapsed = performance.now() - started;
      if (options.runOut) {
        const file =
          options.modes.length > 1
            ? options.runOut.replace(/(\.\w+)?$/, `.${mode}$1`)
            : options.runOut;
        await writeFile(file, trecRun(rankings, scores, `kb-${mode}`));
      }
      const line = {
        dataset: basename(options.dataset),
        mode,
        tenant,
        documents: dataset.corpus.length,
        queries: dataset.queries.length,
        ...evaluate(rankings, dataset.qrels),
        mean_query_ms: Math.round((elapsed / dataset.queries.length) * 10) / 10,
      };
      process.stdout.write(`${JSON.stringify(line)}\n`);
    }
  } finally {
    client.close();
  }
}

export async function ingest(
  client: KbClient,
  corpus: { _id: string; title: string; text: string }[],
  options: Pick<EvalOptions, 'concurrency' | 'log'> & {
    knowledgeBaseId?: string;
    /** Readers of each entry, by position in the corpus. */
    aclOf?: (index: number) => { groups?: string[]; tenant?: boolean };
  },
) {
  const started = performance.now();
  await mapPool(corpus, options.concurrency, async (entry, i) => {
    await client.upload(`${entry._id}.txt`, contentOf(entry), {
      title: entry.title || entry._id,
      metadata: { externalId: entry._id },
      ...(options.knowledgeBaseId ? { knowledgeBaseIds: [options.knowledgeBaseId] } : {}),
      ...(options.aclOf ? { acl: options.aclOf(i) } : {}),
    });
    if ((i + 1) % 250 === 0) options.log(`uploaded ${i + 1}/${corpus.length}`);
  });
  options.log(
    `uploaded ${corpus.length} documents in ${Math.round(performance.now() - started)} ms`,
  );
}

/** The text a corpus entry is uploaded as. */
export const contentOf = (entry: { title: string; text: string }): string =>
  entry.title ? `${entry.title}\n\n${entry.text}` : entry.text;

/**
 * Waits until every distinct text of the corpus is an indexed document; identical entries are one
 * document (the upload reports the rest as duplicates). Returns document id → the corpus ids of
 * its text.
 */
export async function waitIndexed(
  client: KbClient,
  corpus: { _id: string; title: string; text: string }[],
  log: (line: string) => void,
  pollMs = 2000,
): Promise<Map<string, string[]>> {
  const idsByContent = new Map<string, string[]>();
  for (const entry of corpus) {
    const content = contentOf(entry);
    idsByContent.set(content, [...(idsByContent.get(content) ?? []), entry._id]);
  }
  const idsOf = new Map(
    [...idsByContent.values()].flatMap((ids) => ids.map((id) => [id, ids] as const)),
  );
  const expected = idsByContent.size;
  const started = performance.now();
  for (;;) {
    const documents = await client.listAll();
    const indexed = documents.filter((d) => d.status === 'indexed');
    const failed = documents.filter((d) => d.status === 'failed');
    if (failed.length > 0) {
      throw new Error(
        `${failed.length} documents failed, e.g. ${JSON.stringify(failed[0]?.failure)}`,
      );
    }
    if (indexed.length >= expected) {
      log(
        `all ${expected} distinct documents indexed after ${Math.round(performance.now() - started)} ms of waiting`,
      );
      return new Map(
        indexed.map((d) => {
          const externalId = String(d.metadata['externalId'] ?? d.id);
          return [d.id, idsOf.get(externalId) ?? [externalId]];
        }),
      );
    }
    log(`indexed ${indexed.length}/${expected}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** TREC run format: `qid Q0 docid rank score tag`, ranks from 1. */
export function trecRun(
  rankings: Map<string, Ranking>,
  scores: Map<string, number[]>,
  tag: string,
): string {
  const lines: string[] = [];
  for (const [queryId, ranking] of rankings) {
    ranking.forEach((docId, i) =>
      lines.push(
        `${queryId} Q0 ${docId} ${i + 1} ${(scores.get(queryId)?.[i] ?? 0).toFixed(6)} ${tag}`,
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}
