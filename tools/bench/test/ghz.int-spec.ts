import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { Metadata, Server, ServerCredentials, status } from '@grpc/grpc-js';
import { kbv1 } from '@kb/contracts';

import { ghzSearch } from '../src/bench/ghz';

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
