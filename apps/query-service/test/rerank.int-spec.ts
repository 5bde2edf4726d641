import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { mintToken } from '@kb/auth';

import { FAKE_CROSS_ENCODER, installFakeCrossEncoder } from './support/fake-cross-encoder';

/** The built service (`npm test` builds first); onnxruntime cannot run inside Jest's sandbox. */
const MAIN = join(__dirname, '..', 'dist', 'main.js');
/** Ports of this file's own query-service (block 16), away from the shared services' ports. */
const PORT = 16_005;
const GRPC_PORT = 16_051;
const URL = `http://127.0.0.1:${PORT}`;

const serviceEnv = (overrides: Record<string, string>): NodeJS.ProcessEnv => ({
  ...process.env,
  PORT: String(PORT),
  GRPC_PORT: String(GRPC_PORT),
  OTEL_SDK_DISABLED: 'true',
  LOG_LEVEL: 'warn',
  // Its own consumer group: it must not share acl events with another query-service.
  KAFKA_GROUP_ID: `rerank-int-${process.pid}`,
  ...overrides,
});

jest.setTimeout(120_000);

/**
 * query-service as a process, with the FAKE cross-encoder (support/fake-cross-encoder.ts: 2 per
 * "lighthouse", 1 per "keeper" in the passage) configured: the boot wiring, POST /v1/rerank on
 * the real adapter, and the cross-encoder's state in /health/ready and GET /v1/models.
 */
describe('query-service with a cross-encoder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kb-rerank-int-'));
  let service: ChildProcess | undefined;
  let output = '';
  let authorization = '';

  beforeAll(async () => {
    installFakeCrossEncoder(dir);
    authorization = `Bearer ${await mintToken({ tenant: 'rerank-int', user: 'agent' }, process.env['AUTH_JWT_SECRET']!)}`;
    service = spawn(process.execPath, [MAIN], {
      env: serviceEnv({ RERANKER_MODEL: FAKE_CROSS_ENCODER, RERANKER_MODEL_DIR: dir }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    service.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    service.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 90_000;
    for (;;) {
      const ready = await fetch(`${URL}/health/ready`).catch(() => undefined);
      if (ready?.ok) break;
      if (service.exitCode !== null || Date.now() > deadline) {
        throw new Error(`query-service did not become ready:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  });

  afterAll(async () => {
    if (service && service.exitCode === null) {
      const exited = new Promise((resolve) => service!.once('exit', resolve));
      service.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const rerank = async (body: unknown) => {
    const response = await fetch(`${URL}/v1/rerank`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };

  it('reranks the documents with the cross-encoder, best first', async () => {
    const keeper = 'A lighthouse keeper lived beside the lighthouse.';
    const documents = [
      'The harbour has a long pier.',
      { text: keeper },
      'The keeper of the bees.',
      'lighthouse',
    ];
    expect(
      await rerank({
        query: 'who was the lighthouse keeper?',
        documents,
        top_k: 3,
        return_documents: true,
      }),
    ).toEqual({
      status: 200,
      body: {
        model: FAKE_CROSS_ENCODER,
        reranked: true,
        results: [
          {
            index: 1,
            relevance_score: 5,
            original_rank: 2,
            document: { text: keeper },
          },
          { index: 3, relevance_score: 2, original_rank: 4, document: { text: 'lighthouse' } },
          { index: 2, relevance_score: 1, original_rank: 3, document: { text: documents[2] } },
        ],
      },
    });
  });

  it('answers no results for no documents, and 400 for a bad top_k', async () => {
    expect(await rerank({ query: 'q', documents: [] })).toEqual({
      status: 200,
      body: { model: FAKE_CROSS_ENCODER, reranked: true, results: [] },
    });
    expect(await rerank({ query: 'q', documents: ['a'], top_k: -1 })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_argument' } },
    });
  });

  it('shows the cross-encoder in /health/ready and GET /v1/models', async () => {
    const state = { configured: true, loaded: true, model: FAKE_CROSS_ENCODER };
    const ready = (await (await fetch(`${URL}/health/ready`)).json()) as Record<string, unknown>;
    expect(ready).toMatchObject({ status: 'ready', details: { cross_encoder: state } });
    const models = (await (
      await fetch(`${URL}/v1/models`, { headers: { authorization } })
    ).json()) as { data: Array<{ id: string; kind: string }>; cross_encoder: unknown };
    expect(models.data).toContainEqual(
      expect.objectContaining({ id: FAKE_CROSS_ENCODER, object: 'model', kind: 'cross-encoder' }),
    );
    expect(models.cross_encoder).toEqual(state);
  });

  it('does not start when the configured cross-encoder is not installed, and says why', () => {
    const result = spawnSync(process.execPath, [MAIN], {
      env: serviceEnv({
        PORT: String(PORT + 10),
        GRPC_PORT: String(GRPC_PORT + 10),
        RERANKER_MODEL: 'no-such-cross-encoder',
        RERANKER_MODEL_DIR: dir,
      }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `query-service: RERANKER_MODEL=no-such-cross-encoder is configured but ${join(dir, 'no-such-cross-encoder')} holds no model`,
    );
  });
});
