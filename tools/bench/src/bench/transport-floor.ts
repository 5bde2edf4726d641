import { type sendUnaryData, Server, ServerCredentials, type ServerUnaryCall } from '@grpc/grpc-js';
import { kbv1 } from '@kb/contracts';

import { type GhzOptions, ghzSearch } from './ghz';
import type { LatencySummary } from './latency';

/**
 * The transport floor under a cache hit, as the model floor is under a miss (issue 40,
 * docs/performance.md "What a hit costs over the transport"): a bare grpc-js server in the
 * benchmark's own process answers `kb.v1.KnowledgeBase/Search` with a page query-service returned,
 * doing nothing else, and ghz asks it the hit pass's requests at concurrency 1. What a hit takes
 * over this floor is the service's own (guard, rate limit, cache, audit); the floor is the
 * machine's: grpc-js, HTTP/2, ghz and the scheduler, which no change to the search lowers.
 */
export async function transportFloor(
  ghz: Omit<GhzOptions, 'address'>,
  page: kbv1.SearchResponse,
  requests: object[],
): Promise<LatencySummary> {
  const server = await pageServer(page);
  try {
    return await ghzSearch({ ...ghz, address: server.address }, { requests, concurrency: 1 });
  } finally {
    await server.close();
  }
}

/** The floor under the ghz hit pass (`hit`), and how far over it the hits' p95 is. */
export async function hitsOverTransport(
  ghz: Omit<GhzOptions, 'address'>,
  page: kbv1.SearchResponse,
  requests: object[],
  hit: LatencySummary,
): Promise<{ c1: LatencySummary; ghz_hit_p95_minus_floor_p95_ms: number }> {
  const c1 = await transportFloor(ghz, page, requests);
  return { c1, ghz_hit_p95_minus_floor_p95_ms: Math.round((hit.p95_ms - c1.p95_ms) * 100) / 100 };
}

/** A gRPC server on a loopback port whose `Search` answers every call with `page` at once. */
export async function pageServer(
  page: kbv1.SearchResponse,
): Promise<{ address: string; close: () => Promise<void> }> {
  const server = new Server();
  server.addService(kbv1.KnowledgeBaseService, {
    search: (
      _call: ServerUnaryCall<kbv1.SearchRequest, kbv1.SearchResponse>,
      callback: sendUnaryData<kbv1.SearchResponse>,
    ) => callback(null, page),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
