import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { Client, credentials, Metadata, Server, ServerCredentials, status } from '@grpc/grpc-js';
import { kbv1 } from '@kb/contracts';

import { ghzSearch } from '../src/bench/ghz';
import { pageServer, transportFloor } from '../src/bench/transport-floor';

// The real ghz binary (scripts/infra/install-tools.sh, which `npm test` runs first) against a
// gRPC server of the contract's KnowledgeBase service: the arguments the benchmark passes are
// the ones ghz understands, every request is sent once, and a refused search fails the pass.
const KB_HOME = process.env['KB_HOME'] ?? join(process.env['HOME'] ?? '', '.cache', 'kb');
const GHZ = join(KB_HOME, 'bin', 'ghz');
const PROTO_ROOT = join(__dirname, '../../../libs/contracts/proto');

describe('ghzSearch (the query bench’s independent client)', () => {
  let server: Server;
  let address: string;
  const seen: Array<{ query: string; topK: number; mode: number; authorization: string }> = [];
  let refuse = (_query: string) => false;

  beforeAll(async () => {
    if (!existsSync(GHZ)) throw new Error(`${GHZ} missing: run scripts/infra/install-tools.sh`);
    server = new Server();
    server.addService(kbv1.KnowledgeBaseService, {
      search: (
        call: ServerUnaryCall<kbv1.SearchRequest, kbv1.SearchResponse>,
        respond: sendUnaryData<kbv1.SearchResponse>,
      ) => {
        const { query, topK, mode } = call.request;
        const authorization = String(call.metadata.get('authorization')[0] ?? '');
        seen.push({ query, topK, mode, authorization });
        if (refuse(query)) {
          respond({ code: status.UNAUTHENTICATED, details: 'no', metadata: new Metadata() });
          return;
        }
        respond(null, kbv1.SearchResponse.fromPartial({ tookMs: 1 }));
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    address = `127.0.0.1:${port}`;
  });

  afterAll(() => server?.forceShutdown());
  beforeEach(() => {
    seen.length = 0;
    refuse = () => false;
  });

  const requests = Array.from({ length: 40 }, (_, i) => ({
    query: `query ${i}`,
    topK: 10,
    mode: 'SEARCH_MODE_HYBRID',
  }));

  it('sends every request once, with the token, and summarizes the latencies', async () => {
    const summary = await ghzSearch(
      { binary: GHZ, protoRoot: PROTO_ROOT, address, token: 'the-token' },
      { requests, concurrency: 4 },
    );
    expect(seen.map((s) => s.query).sort()).toEqual(requests.map((r) => r.query).sort());
    expect(new Set(seen.map((s) => s.authorization))).toEqual(new Set(['Bearer the-token']));
    expect(new Set(seen.map((s) => `${s.topK} ${s.mode}`))).toEqual(
      new Set([`10 ${kbv1.SearchMode.SEARCH_MODE_HYBRID}`]),
    );
    expect(summary.qps).toBeGreaterThan(0);
    expect(summary.p50_ms).toBeGreaterThan(0);
    expect(summary.p50_ms).toBeLessThanOrEqual(summary.p95_ms);
    expect(summary.p95_ms).toBeLessThanOrEqual(summary.p99_ms);
  });

  it('fails the pass when a search is refused', async () => {
    refuse = (query) => query === 'query 7';
    await expect(
      ghzSearch(
        { binary: GHZ, protoRoot: PROTO_ROOT, address, token: 't' },
        { requests, concurrency: 4 },
      ),
    ).rejects.toThrow(/ghz: 39 of 40 searches answered OK \(Unauthenticated × 1/);
  });
});

describe('transportFloor (the hits’ reference)', () => {
  const page = kbv1.SearchResponse.fromPartial({
    hits: [
      { documentId: 'doc-1', documentVersion: 1, chunkIndex: 0, text: 'a cached hit', score: 0.5 },
    ],
    tookMs: 1.5,
    cacheHit: true,
  });

  it('serves the page it is given to every call, unchanged', async () => {
    const server = await pageServer(page);
    const client = new Client(server.address, credentials.createInsecure());
    try {
      const ask = () =>
        new Promise<kbv1.SearchResponse>((resolve, reject) =>
          client.makeUnaryRequest(
            kbv1.KnowledgeBaseService.search.path,
            kbv1.KnowledgeBaseService.search.requestSerialize,
            kbv1.KnowledgeBaseService.search.responseDeserialize,
            kbv1.SearchRequest.fromPartial({ query: 'anything' }),
            (error, answer) => (error || !answer ? reject(error) : resolve(answer)),
          ),
        );
      expect(await ask()).toEqual(page);
      expect(await ask()).toEqual(page);
    } finally {
      client.close();
      await server.close();
    }
  });

  it('times ghz asking it every request at concurrency 1, then stops it', async () => {
    const requests = Array.from({ length: 30 }, (_, i) => ({ query: `q ${i}`, topK: 10 }));
    const summary = await transportFloor(
      { binary: GHZ, protoRoot: PROTO_ROOT, token: 't' },
      page,
      requests,
    );
    expect(summary.p50_ms).toBeGreaterThan(0);
    expect(summary.p50_ms).toBeLessThanOrEqual(summary.p95_ms);
    expect(summary.qps).toBeGreaterThan(0);
  });
});
