import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { basename } from 'node:path';

import { kbv1 } from '@kb/contracts';
import { KbClient, type KbEndpoints, localToken, mapPool } from '@kb/kb-cli/api';

import { contentOf, loadBeir } from './beir';
import { evaluate, perModeLosers, type Ranking } from './metrics';
import { rerankSweep } from './rerank-eval';
import { printRerankRows } from './rerank-eval.commands';

export type EvalMode = 'hybrid' | 'semantic' | 'lexical' | 'auto';

export interface EvalOptions extends Omit<KbEndpoints, 'token'> {
  dataset: string;
  modes: EvalMode[];
  runOut?: string;
  /** Reuse a tenant that already holds this corpus instead of ingesting it again. */
  tenant?: string;
  /**
   * Evaluate a knowledge base that already holds the corpus (documents named `<corpus id>.<ext>`
   * or with metadata `externalId`); nothing is uploaded.
   */
  knowledgeBase?: string;
  /** Bearer token for an existing knowledge base (default: a local admin token of `tenant`). */
  token?: string;
  /** Embedding model of the knowledge base the evaluation creates (default: the deployment's). */
  model?: string;
  /** Queries listed per mode where it lost most nDCG@10 to the best other mode. */
  losers?: number;
  /**
   * Cross-encoder folder: rerank each mode's ranking offline over the depth × truncation × fusion
   * grid and print nDCG@10 with and without, with paired standard errors (ADR 46).
   */
  rerankModel?: string;
  /** Ask the service to rerank (`rerank: true`): measures the served rerank (ADR 47). */
  serviceRerank?: boolean;
  concurrency: number;
  /** Upload every n-th document readable by everyone in the tenant (`t:*`), the rest owner-only. */
  tenantWideEvery?: number;
  log: (line: string) => void;
}

const GRPC_MODE: Record<EvalMode, kbv1.SearchMode> = {
  hybrid: kbv1.SearchMode.SEARCH_MODE_HYBRID,
  semantic: kbv1.SearchMode.SEARCH_MODE_SEMANTIC,
  lexical: kbv1.SearchMode.SEARCH_MODE_LEXICAL,
  auto: kbv1.SearchMode.SEARCH_MODE_AUTO,
};

/**
 * BEIR evaluation through the public APIs: ingest every non-empty corpus entry as one document
 * over REST into a fresh knowledge base (its `_id` kept as metadata `externalId`), wait until all
 * are indexed (documents the pipeline refuses, e.g. `no_text`, are counted and left out), run
 * every query through gRPC Search scoped to that knowledge base for 100 chunks, keep each
 * document's best chunk, and score the ranking. With `knowledgeBase`, an existing knowledge base
 * is evaluated instead.
 * Prints one JSON line per mode (with the queries it lost most on); writes a TREC run file per
 * mode when asked.
 */
export async function runEval(options: EvalOptions): Promise<void> {
  const dataset = await loadBeir(options.dataset);
  const skips = dataset.skipped;
  if (skips.emptyDocuments || skips.queriesWithoutText || skips.unknownJudgedDocuments) {
    options.log(
      `skipped ${skips.emptyDocuments} empty documents and ${skips.queriesWithoutText} queries without text; ${skips.unknownJudgedDocuments} judgments name ids not in the corpus`,
    );
  }
  const tenant = options.tenant ?? `eval-${randomUUID().slice(0, 8)}`;
  // A tenant admin: the evaluation measures ranking, not access control.
  const token = options.token ?? (await localToken({ tenant, user: 'eval', roles: ['admin'] }));
  const client = new KbClient({ ...options, token });
  const existing = options.knowledgeBase ?? (options.tenant ? undefined : null);
  const knowledgeBaseId =
    options.knowledgeBase ?? `${basename(options.dataset)}-${randomUUID().slice(0, 8)}`;
  let uploadFailures = 0;
  let refused = new Set<string>();
  const ingestStarted = performance.now();
  try {
    if (existing === null) {
      await client.createKnowledgeBase(
        knowledgeBaseId,
        `${basename(options.dataset)} evaluation`,
        options.model ? { embeddingModel: options.model } : {},
      );
      const every = options.tenantWideEvery;
      ({ failed: uploadFailures, refused } = await ingest(client, dataset.corpus, {
        ...options,
        knowledgeBaseId,
        ...(every ? { aclOf: (i: number) => (i % every === 0 ? { tenant: true } : {}) } : {}),
        tolerateFailures: true,
      }));
    }
    // Documents the API refused are not waited for.
    const { documents: externalIds, failed } = await waitIndexed(
      client,
      dataset.corpus.filter((entry) => !refused.has(entry._id)),
      options.log,
      {
        allowFailed: true,
        ...(existing === undefined ? {} : { knowledgeBaseId }),
        // A reused tenant or knowledge base: wait for what it holds, not for the whole corpus.
        expectAll: existing === null,
      },
    );
    // Throughput of this run's ingest (upload to indexed), when it ingested.
    const ingestSeconds = (performance.now() - ingestStarted) / 1000;
    const chunks =
      existing === null
        ? (await client.listAll(knowledgeBaseId)).reduce((sum, d) => sum + (d.chunkCount ?? 0), 0)
        : undefined;
    const ingestFigures =
      chunks === undefined
        ? {}
        : {
            chunks,
            ingest_s: Math.round(ingestSeconds),
            ingest_chunks_per_s: Math.round((chunks / ingestSeconds) * 10) / 10,
          };
    const perMode = new Map<EvalMode, Map<string, Ranking>>();
    for (const mode of options.modes) {
      const rankings = new Map<string, Ranking>();
      const scores = new Map<string, number[]>();
      const types = new Map<string, number>();
      const reranks = new Map<string, number>();
      const started = performance.now();
      await mapPool(dataset.queries, 4, async (query) => {
        const response = await client.search({
          query: query.text,
          topK: 100,
          mode: GRPC_MODE[mode],
          rerank: options.serviceRerank ?? false,
          // A reused tenant holds the corpus in an earlier run's knowledge base: search them all.
          knowledgeBaseIds: existing === undefined ? [] : [knowledgeBaseId],
        });
        reranks.set(response.rerank, (reranks.get(response.rerank) ?? 0) + 1);
        if (response.queryType)
          types.set(response.queryType, (types.get(response.queryType) ?? 0) + 1);
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
      perMode.set(mode, rankings);
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
        knowledge_base: existing === undefined ? null : knowledgeBaseId,
        ...(options.model ? { model: options.model } : {}),
        documents: dataset.corpus.length,
        skipped_empty_documents: skips.emptyDocuments,
        failed_documents: failed + uploadFailures,
        unknown_judged_ids: skips.unknownJudgedDocuments,
        ...ingestFigures,
        queries: dataset.queries.length,
        ...evaluate(rankings, dataset.qrels),
        ...(mode === 'auto' ? { query_types: Object.fromEntries(types) } : {}),
        ...(options.serviceRerank ? { rerank: Object.fromEntries(reranks) } : {}),
        mean_query_ms: Math.round((elapsed / dataset.queries.length) * 10) / 10,
      };
      process.stdout.write(`${JSON.stringify(line)}\n`);
    }
    for (const [mode, rankings] of options.rerankModel ? perMode : []) {
      const rows = await rerankSweep(
        dataset,
        rankings,
        options.rerankModel!,
        undefined,
        options.log,
      );
      printRerankRows(`${basename(options.dataset)}:${mode}`, rows);
    }
    if (perMode.size > 1) {
      for (const [mode, losers] of perModeLosers(perMode, dataset.qrels, options.losers ?? 5)) {
        const texts = new Map(dataset.queries.map((q) => [q._id, q.text]));
        process.stdout.write(
          `${JSON.stringify({
            mode,
            losers: losers.map((l) => ({ ...l, query: texts.get(l.queryId)?.slice(0, 120) })),
          })}\n`,
        );
      }
    }
  } finally {
    client.close();
  }
}

/**
 * Uploads every entry. With `tolerateFailures`, an upload the API refuses is logged and counted
 * (the first few with their error code) instead of ending the run.
 */
export async function ingest(
  client: KbClient,
  corpus: { _id: string; title: string; text: string }[],
  options: Pick<EvalOptions, 'concurrency' | 'log'> & {
    knowledgeBaseId?: string;
    /** Readers of each entry, by position in the corpus. */
    aclOf?: (index: number) => { groups?: string[]; tenant?: boolean };
    tolerateFailures?: boolean;
  },
): Promise<{ failed: number; refused: Set<string> }> {
  const started = performance.now();
  let failed = 0;
  const refused = new Set<string>();
  await mapPool(corpus, options.concurrency, async (entry, i) => {
    try {
      await withRetries(() =>
        client.upload(`${entry._id}.txt`, contentOf(entry), {
          title: entry.title || entry._id,
          metadata: { externalId: entry._id },
          ...(options.knowledgeBaseId ? { knowledgeBaseIds: [options.knowledgeBaseId] } : {}),
          ...(options.aclOf ? { acl: options.aclOf(i) } : {}),
        }),
      );
    } catch (error) {
      if (!options.tolerateFailures) throw error;
      refused.add(entry._id);
      if (++failed <= 5) options.log(`skipped: ${(error as Error).message}`);
    }
    if ((i + 1) % 250 === 0) options.log(`uploaded ${i + 1}/${corpus.length}`);
  });
  options.log(
    `uploaded ${corpus.length - failed} documents in ${Math.round(performance.now() - started)} ms` +
      (failed ? ` (${failed} refused, skipped)` : ''),
  );
  return { failed, refused };
}

export { contentOf };

/**
 * Retries an upload the API refused for a passing reason (429, 5xx: a service still starting or
 * overloaded), 4 times with 1, 2, 4, 8 s between; any other refusal is final at once.
 */
async function withRetries<T>(upload: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await upload();
    } catch (error) {
      const transient = / failed: (429|5\d\d) /.test((error as Error).message);
      if (!transient || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000 * 2 ** (attempt - 1)));
    }
  }
}

/**
 * Waits until every distinct text of the corpus is an indexed document; identical entries are one
 * document (the upload reports the rest as duplicates). Returns document id → the corpus ids of
 * its text, found by metadata `externalId` or else the file name without its extension.
 * A failed document ends the wait with an error unless `allowFailed`, which counts it instead.
 * Without `expectAll` (an existing knowledge base), the wait ends when nothing is still in flight.
 */
export async function waitIndexed(
  client: KbClient,
  corpus: { _id: string; title: string; text: string }[],
  log: (line: string) => void,
  options: {
    pollMs?: number;
    allowFailed?: boolean;
    knowledgeBaseId?: string;
    expectAll?: boolean;
  } = {},
): Promise<{ documents: Map<string, string[]>; failed: number }> {
  const { pollMs = 2000, allowFailed = false, expectAll = true } = options;
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
    const documents = await client.listAll(options.knowledgeBaseId);
    const indexed = documents.filter((d) => d.status === 'indexed');
    const failed = documents.filter((d) => d.status === 'failed');
    if (failed.length > 0 && !allowFailed) {
      throw new Error(
        `${failed.length} documents failed, e.g. ${JSON.stringify(failed[0]?.failure)}`,
      );
    }
    const settled = expectAll
      ? indexed.length + failed.length >= expected
      : indexed.length + failed.length === documents.length;
    if (settled) {
      log(
        `${indexed.length} distinct documents indexed after ${Math.round(performance.now() - started)} ms of waiting` +
          (failed.length
            ? `; ${failed.length} failed and left out, e.g. ${JSON.stringify(failed[0]?.failure)}`
            : ''),
      );
      return {
        documents: new Map(
          indexed.map((d) => {
            const externalId = String(
              d.metadata['externalId'] ?? d.filename?.replace(/\.[^.]*$/, '') ?? d.id,
            );
            return [d.id, idsOf.get(externalId) ?? [externalId]];
          }),
        ),
        failed: failed.length,
      };
    }
    log(`indexed ${indexed.length}/${expectAll ? expected : documents.length}`);
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
