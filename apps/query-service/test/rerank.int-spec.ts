import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { mintToken } from '@kb/auth';
import { Pool } from 'pg';

import { FAKE_CROSS_ENCODER, installFakeCrossEncoder } from './support/fake-cross-encoder';

/** The built service (`npm test` builds first); onnxruntime cannot run inside Jest's sandbox. */
const MAIN = join(__dirname, '..', 'dist', 'main.js');
/** Ports of this file's own query-service (block 16), away from the shared services' ports. */
const PORT = 16_005;
const GRPC_PORT = 16_051;
const URL = `http://127.0.0.1:${PORT}`;
/**
 * A real acl-service beside it, on a throw-away schema: `POST /v1/rerank` needs read on documents
 * (review N5), which query-service asks acl-service for.
 */
const ACL_MAIN = join(__dirname, '..', '..', 'acl-service', 'dist', 'main.js');
const ACL_PORT = 16_006;
const ACL_GRPC_PORT = 16_061;
const ACL_SCHEMA = `acl_rerank_int_${process.pid}`;

const serviceEnv = (overrides: Record<string, string>): NodeJS.ProcessEnv => ({
  ...process.env,
  PORT: String(PORT),
  GRPC_PORT: String(GRPC_PORT),
  OTEL_SDK_DISABLED: 'true',
  LOG_LEVEL: 'warn',
  // Its own consumer group: it must not share acl events with another query-service.
  KAFKA_GROUP_ID: `rerank-int-${process.pid}`,
  ACL_GRPC_ADDRESS: `127.0.0.1:${ACL_GRPC_PORT}`,
  ...overrides,
});

/** Spawns a built service and resolves once its /health/ready answers 200. */
async function startReady(
  main: string,
  env: NodeJS.ProcessEnv,
  url: string,
  log: { text: string },
) {
  const child = spawn(process.execPath, [main], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => (log.text += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log.text += chunk.toString()));
  const deadline = Date.now() + 90_000;
  for (;;) {
    const ready = await fetch(`${url}/health/ready`).catch(() => undefined);
    if (ready?.ok) return child;
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`${main} did not become ready:\n${log.text}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function stop(child: ChildProcess | undefined) {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

jest.setTimeout(120_000);

/**
 * query-service as a process, with the FAKE cross-encoder (support/fake-cross-encoder.ts: 2 per
 * "lighthouse", 1 per "keeper" in the passage) configured: the boot wiring, POST /v1/rerank on
 * the real adapter, and the cross-encoder's state in /health/ready and GET /v1/models.
 */
describe('query-service with a cross-encoder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kb-rerank-int-'));
  let service: ChildProcess | undefined;
  let acl: ChildProcess | undefined;
  const log = { text: '' };
  let authorization = '';

  beforeAll(async () => {
    installFakeCrossEncoder(dir);
    authorization = `Bearer ${await mintToken({ tenant: 'rerank-int', user: 'agent' }, process.env['AUTH_JWT_SECRET']!)}`;
    acl = await startReady(
      ACL_MAIN,
      {
        ...process.env,
        PORT: String(ACL_PORT),
        GRPC_PORT: String(ACL_GRPC_PORT),
        DB_SCHEMA: ACL_SCHEMA,
        KAFKA_GROUP_ID: `rerank-int-acl-${process.pid}`,
        OTEL_SDK_DISABLED: 'true',
        LOG_LEVEL: 'warn',
      },
      `http://127.0.0.1:${ACL_PORT}`,
      log,
    );
    service = await startReady(
      MAIN,
      serviceEnv({ RERANKER_MODEL: FAKE_CROSS_ENCODER, RERANKER_MODEL_DIR: dir }),
      URL,
      log,
    );
  });

  afterAll(async () => {
    await stop(service);
    await stop(acl);
    const pool = new Pool({ connectionString: process.env['DATABASE_URL'] });
    await pool.query(`DROP SCHEMA IF EXISTS ${ACL_SCHEMA} CASCADE`);
    await pool.end();
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
