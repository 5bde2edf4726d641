import { randomUUID } from 'node:crypto';

import { kbv1 } from '@kb/contracts';
import type { KbEndpoints } from '@kb/kb-cli/api';

import { loadBeir } from '../eval/beir';
import { ingest, waitIndexed } from '../eval/eval.command';
import { afterWrite } from './after-write';
import { diskMb, sampleMemory } from './footprint';
import type { GhzOptions } from './ghz';
import { type LatencySummary, measure, StageSamples } from './latency';
import { lexicalPaths, pathsBetween, untilInMemory, warmStartOf } from './lexical-path';
import { callersOf, readerToken, TEAMS } from './query.callers';
import { hitRequests, independentPasses, TOP_K } from './query.ghz';
import { embedFloor, type ReferenceModelOptions, shortQuery } from './reference';
import { type ScaleBuild, scaledTenant, type ScaleOptions } from './scale';
import { hitsOverTransport } from './transport-floor';

export interface QueryBenchOptions extends Omit<KbEndpoints, 'token'> {
  dataset: string;
  /** Reuse this tenant: ingested into only when it holds no document yet. */
  tenant?: string;
  rounds: number;
  /** The embedding model the services run, for the independent `embed_floor` reference. */
  model?: ReferenceModelOptions;
  /**
   * Bench a tenant holding `copies` copies of the corpus instead, written directly into both
   * indexes (`<tenant>-x<copies>`, kept for reruns): 10 for 10× CISI, 52 for ~100,000 chunks.
   */
  scale?: { copies: number } & Omit<ScaleOptions, 'log'>;
  /** The independent client: the same passes through ghz as well, when its binary is given. */
  ghz?: Omit<GhzOptions, 'address' | 'token'>;
  /** query-service's HTTP base URL: its metrics say whether ghz's passes hit the cache. */
  queryUrl?: string;
  /** Where to read the benched tenant's disk (both indexes, Redis) once the passes are done. */
  footprint?: Omit<Parameters<typeof diskMb>[0], 'tenant'> & {
    /** The services' LEXICAL_MEMORY_CHUNKS: a tenant within it is timed once in memory. */
    memoryChunks: number;
  };
  log: (line: string) => void;
}

const CONCURRENCY = [1, 8, 32] as const;

/**
 * Search latency through gRPC on an indexed corpus, for cache misses and cache hits, at
 * concurrency 1, 8 and 32. A miss pass asks every query once per round with a top-k and a query
 * suffix no earlier round used, so neither the result cache nor the query-embedding cache can
 * answer; `miss_embedding_cached` repeats the first miss round's texts with a new top-k (results
 * not cached, embeddings cached), which shows what the model costs in a miss. A hit pass repeats
 * requests already answered once.
 */
export async function runQueryBench(options: QueryBenchOptions): Promise<object> {
  const dataset = await loadBeir(options.dataset);
  const tenant = options.tenant ?? `bench-${randomUUID().slice(0, 8)}`;
  options.log(`tenant ${tenant} (rerun on it with --tenant ${tenant})`);
  const base = await callersOf(options, tenant);
  let admin = base.admin;
  let client = base.reader;
  try {
    const held = options.tenant ? (await admin.listAll()).length : 0;
    if (held === 0) {
      await ingest(admin, dataset.corpus, {
        concurrency: 8,
        log: options.log,
        aclOf: (i) => ({ groups: [`team-${i % TEAMS}`] }),
      });
    }
    await waitIndexed(admin, dataset.corpus, options.log);
    const documents = (await admin.listAll()).filter((d) => d.status === 'indexed');
    let benched = tenant;
    let build: ScaleBuild | undefined;
    let corpus = {
      documents: documents.length,
      chunks: documents.reduce((sum, d) => sum + (d.chunkCount ?? 0), 0),
    };
    options.log(`tenant ${tenant}: ${corpus.documents} documents, ${corpus.chunks} chunks`);
    if (options.scale) {
      benched = `${tenant}-x${options.scale.copies}`;
      build = await scaledTenant(
        { ...options.scale, log: options.log },
        tenant,
        benched,
        options.scale.copies,
      );
      corpus = { documents: corpus.documents * options.scale.copies, chunks: build.chunks };
      ({ admin, reader: client } = await callersOf(options, benched));
      base.admin.close();
      base.reader.close();
      options.log(`benching ${benched}: ${corpus.documents} documents, ${corpus.chunks} chunks`);
    }
    const search =
      (query: string, topK: number, as = client, stages?: StageSamples, rerank = false) =>
      async () =>
        as.search(
          { query, topK, mode: kbv1.SearchMode.SEARCH_MODE_HYBRID, ...(rerank ? { rerank } : {}) },
          stages?.record,
        );
    // Where the service says a search spent its time (its Server-Timing), per pass at c1.
    const stages = {
      miss_c1: new StageSamples(),
      miss_short_c1: new StageSamples(),
      miss_embedding_cached_c1: new StageSamples(),
      rerank_miss_c1: new StageSamples(),
      hit_c1: new StageSamples(),
    };
    const queries = dataset.queries.map((q) => q.text);
    const shortQueries = queries.map(shortQuery);
    // A suffix of this run's own, so no pass can hit results cached by an earlier run.
    const run = randomUUID().slice(0, 6);
    const miss: Record<string, LatencySummary> = {};
    const hit: Record<string, LatencySummary> = {};
    let pass = 0;
    // A space within LEXICAL_MEMORY_CHUNKS is timed in memory: its snapshot is built first, so the
    // warm-up below reads the queries' posting lists into it, as searches on a built snapshot do
    // (at ×500 a common lexeme's list is ~350,000 postings: ~0.3 s in Postgres alone).
    const memoryChunks = options.footprint?.memoryChunks ?? 0;
    const settle = () =>
      options.queryUrl && corpus.chunks <= memoryChunks
        ? untilInMemory(
            options.queryUrl,
            () => search(`${queries[0]} (${run} settle ${Date.now()})`, TOP_K)(),
            options.log,
          )
        : Promise.resolve(undefined);
    // Whether the services took up the last run's warm set before they were ready (ADR 62): a
    // run after another on the same tenant starts warm; LEXICAL_WARM_TIMEOUT_MS=0 starts cold.
    const warmStart = options.queryUrl ? await warmStartOf(options.queryUrl) : undefined;
    if (warmStart) options.log(`warm start: ${JSON.stringify(warmStart)}`);
    const settled = await settle();
    if (settled) options.log(`lexical snapshot in use after ${settled.waited_ms} ms`);
    // Warm-up, not among the passes: right after an ingest or a snapshot's build the new rows,
    // Postgres' pages and the snapshot's posting lists are cold, and so are the services' code
    // paths; every query once, all cache misses, at c4. Its latency is kept (`warm_up`): what the
    // first searches on a new snapshot pay. A search may fail here (past the 5 s deadline):
    // counted and logged, not fatal; the measured passes fail on any error.
    let warmUpFailures = 0;
    const warmUp = await measure(
      queries.map((q) => async () => {
        await search(`${q} (${run} warm-up)`, TOP_K)().catch(() => warmUpFailures++);
      }),
      4,
    );
    options.log(`warm-up c4: ${JSON.stringify(warmUp)}, ${warmUpFailures} failed`);
    const pathsBefore = options.queryUrl ? await lexicalPaths(options.queryUrl) : undefined;
    // Resident memory of the services and servers, its largest reading while the passes run.
    const memory = sampleMemory();
    for (const c of CONCURRENCY) {
      // Each round asks for a top-k (11, 12, …) and a text of its own, so every cache key is new.
      const requests = Array.from({ length: options.rounds }, () => {
        const round = pass++;
        const recorder = c === 1 ? stages.miss_c1 : undefined;
        return queries.map((q) =>
          search(`${q} (${run} ${round})`, TOP_K + 1 + round, client, recorder),
        );
      }).flat();
      miss[`c${c}`] = await measure(requests, c);
      options.log(`miss c${c}: ${JSON.stringify(miss[`c${c}`])}`);
      // Logged at once: a slow scale's run may be stopped before the summary.
      if (c === 1) options.log(`stages miss c1: ${JSON.stringify(stages.miss_c1.summary())}`);
    }
    // The issue's short queries (first 12 words), cache misses at concurrency 1.
    const shortMiss = await measure(
      shortQueries.map((q) => search(`${q} (${run} short)`, TOP_K, client, stages.miss_short_c1)),
      1,
    );
    options.log(`short-query miss c1: ${JSON.stringify(shortMiss)}`);
    const embeddingCached = await measure(
      queries.map((q) =>
        search(`${q} (${run} 0)`, TOP_K + 1 + pass, client, stages.miss_embedding_cached_c1),
      ),
      1,
    );
    options.log(`miss with cached query embeddings c1: ${JSON.stringify(embeddingCached)}`);
    // `rerank: true`, cache misses: the cross-encoder within RERANK_BUDGET_MS (docs/adr/0047),
    // with what each rerank did (`applied`, or skipped and why): a figure of skipped reranks
    // measures no model.
    const rerankOutcomes: Record<string, number> = {};
    const rerankMiss = await measure(
      queries.map((q) => async () => {
        const response = await search(
          `${q} (${run} rerank)`,
          TOP_K,
          client,
          stages.rerank_miss_c1,
          true,
        )();
        rerankOutcomes[response.rerank] = (rerankOutcomes[response.rerank] ?? 0) + 1;
      }),
      1,
    );
    options.log(`rerank miss c1: ${JSON.stringify(rerankMiss)} ${JSON.stringify(rerankOutcomes)}`);
    // This run's own texts: an earlier run's entries could expire (300 s) during the passes.
    const cachedQueries = queries.map((q) => `${q} (${run} hit)`);
    await measure(
      cachedQueries.map((q) => search(q, TOP_K)),
      4,
    ); // warm the cache
    for (const c of CONCURRENCY) {
      const recorder = c === 1 ? stages.hit_c1 : undefined;
      const requests = Array.from({ length: options.rounds }, () =>
        cachedQueries.map((q) => search(q, TOP_K, client, recorder)),
      ).flat();
      hit[`c${c}`] = await measure(requests, c);
      options.log(`hit c${c}: ${JSON.stringify(hit[`c${c}`])}`);
    }
    // ACL filtering on (the reader) and off (the admin), cache misses at concurrency 1, the same
    // cold queries for both (a query suffix no other pass used).
    const acl: Record<'on' | 'off', LatencySummary> = {
      on: await measure(
        queries.map((q) => search(`${q} (${run} acl on)`, TOP_K, client)),
        1,
      ),
      off: await measure(
        queries.map((q) => search(`${q} (${run} acl off)`, TOP_K, admin)),
        1,
      ),
    };
    options.log(`acl: ${JSON.stringify(acl)}`);
    const written = await afterWrite(
      admin,
      queries.map((q) => search(`${q} (${run} after a write)`, TOP_K)),
      settle,
    );
    options.log(`after a write: ${JSON.stringify(written)}`);
    const independent = options.ghz
      ? await independentPasses(
          {
            ...options.ghz,
            address: options.grpcAddress,
            token: await readerToken(benched),
          },
          queries,
          run,
          options,
        )
      : undefined;
    const memoryMb = await memory.stop();
    const pathsAfter = options.queryUrl ? await lexicalPaths(options.queryUrl) : undefined;
    for (const [pass, samples] of Object.entries(stages)) {
      options.log(`stages ${pass}: ${JSON.stringify(samples.summary())}`);
    }
    options.log(`stages miss_c1, slowest 5 %: ${JSON.stringify(stages.miss_c1.slowest())}`);
    const probeQuery = { query: `${queries[0]!} (${run} probe)`, topK: TOP_K };
    await client.search(probeQuery);
    const probe = await client.search(probeQuery); // the second ask must be a cache hit
    // A scaled tenant's copies are documents too (scale.sql.ts): an empty page means the hit
    // details dropped them as deleted, or the reader's groups do not reach them.
    if (probe.hits.length === 0) {
      throw new Error(
        'the ACL reader found nothing: were the documents shared with its groups (at scale: does document-service hold the copies? rebuild the tenant)?',
      );
    }
    if (!probe.cacheHit)
      throw new Error(
        'the hit pass was not served from the cache: is REDIS_URL set for query-service?',
      );
    const transport =
      options.ghz && independent
        ? await hitsOverTransport(
            { ...options.ghz, token: await readerToken(benched) },
            probe,
            hitRequests(queries, run, options.rounds),
            independent.hit.c1,
          )
        : undefined;
    if (transport) options.log(`transport floor: ${JSON.stringify(transport)}`);
    // The independent reference, run after the services' passes so they do not compete: the same
    // model embedding the same query texts directly with onnxruntime-node.
    const floor = options.model
      ? {
          cisi: await embedFloor(options.model, queries),
          short: await embedFloor(options.model, shortQueries),
        }
      : undefined;
    if (floor) options.log(`embed_floor: ${JSON.stringify(floor)}`);
    const disk = options.footprint
      ? await diskMb({ ...options.footprint, tenant: benched })
      : undefined;
    const diff = (a: number, b: number): number => Math.round((a - b) * 100) / 100;
    const ratio = (a: number, b: number): number => Math.round((a / b) * 100) / 100;
    return {
      tenant: benched,
      ...(benched === tenant ? {} : { copied_from: tenant }),
      corpus,
      ...(build ? { build } : {}),
      ...(disk ? { disk_mb: disk } : {}),
      memory_mb: memoryMb,
      ...(pathsBefore && pathsAfter
        ? {
            lexical: {
              memory_chunks: memoryChunks,
              // How the measured passes' BM25 searches were answered, and the snapshots query-service built since it started (their total time).
              passes: pathsBetween(pathsBefore, pathsAfter),
              snapshots_built: pathsAfter.builds,
              snapshot_build_ms: pathsAfter.build_ms,
            },
          }
        : {}),
      query: {
        ...(warmStart ? { warm_start: warmStart } : {}),
        warm_up: { c4: { ...warmUp, failed: warmUpFailures } },
        after_write: written,
        miss,
        miss_short: { c1: shortMiss },
        hit,
        miss_embedding_cached: { c1: embeddingCached },
        rerank_miss: { c1: rerankMiss, outcomes: rerankOutcomes },
        acl: {
          on: { p50_ms: acl.on.p50_ms, p95_ms: acl.on.p95_ms },
          off: { p50_ms: acl.off.p50_ms, p95_ms: acl.off.p95_ms },
        },
        stages: Object.fromEntries(
          Object.entries(stages).map(([pass, samples]) => [pass, samples.summary()]),
        ),
        // The slowest 5 % of the c1 misses, each stage's mean: what the p95 is made of.
        stages_slowest: { miss_c1: stages.miss_c1.slowest() },
      },
      ...(independent ? { independent_client: independent } : {}),
      ...(transport ? { transport_floor: transport } : {}),
      ...(floor
        ? {
            embed_floor: floor,
            // The figures the issue watches: what a miss costs above the model, and how much of
            // the model's throughput the service keeps.
            over_floor: {
              miss_p95_minus_floor_p95_ms: diff(miss['c1']!.p95_ms, floor.cisi.p95_ms),
              short_miss_p95_minus_floor_p95_ms: diff(shortMiss.p95_ms, floor.short.p95_ms),
              miss_c32_qps_over_floor_qps: ratio(miss['c32']!.qps, floor.cisi.qps),
              ...(independent
                ? {
                    ghz_miss_p95_minus_floor_p95_ms: diff(
                      independent.miss.c1.p95_ms,
                      floor.cisi.p95_ms,
                    ),
                    ghz_miss_c32_qps_over_floor_qps: ratio(
                      independent.miss.c32.qps,
                      floor.cisi.qps,
                    ),
                  }
                : {}),
            },
          }
        : {}),
    };
  } finally {
    client.close();
    admin.close();
  }
}
