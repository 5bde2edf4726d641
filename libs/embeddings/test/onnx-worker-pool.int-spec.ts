/**
 * @jest-environment ./test/support/onnx.environment.js
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { BatchingEmbeddingProvider, OnnxEmbeddingProvider, OnnxWorkerPool } from '../src';

jest.setTimeout(300_000);

const MODEL_DIR = process.env['EMBEDDING_MODEL_DIR'] ?? '';
/** The compiled worker the services run (`npx nx run-many -t build` puts it in dist). */
const BUILT_WORKER = join(__dirname, '..', 'dist', 'onnx.worker.js');
const MODEL = 'e5-small-v2'; // prefixes differ between queries and passages

const TEXTS = [
  'A vaccine exposes the body to a harmless part of a pathogen.',
  'The railway timetable lists the departures of every train.',
  'Short.',
  'Libraries classify books by subject so that readers can find related works on one shelf.',
];

/**
 * The model run in worker threads (docs/adr/0029, Ingest): the very vectors the in-process
 * session gives, queries with their prefix, token counts, and two runs at once through the
 * batching provider; the event loop stays free while the threads run.
 */
describe('OnnxWorkerPool', () => {
  let pool: OnnxWorkerPool;
  let inProcess: OnnxEmbeddingProvider;

  beforeAll(async () => {
    if (!existsSync(BUILT_WORKER)) throw new Error(`${BUILT_WORKER} is missing: build first`);
    const options = { modelDir: MODEL_DIR, model: MODEL, threads: 1 };
    [pool, inProcess] = await Promise.all([
      OnnxWorkerPool.load(options, 2, BUILT_WORKER),
      OnnxEmbeddingProvider.load(options),
    ]);
  });
  afterAll(async () => {
    await pool?.close();
    await inProcess?.close();
  });

  it('embeds passages and queries as the in-process session does', async () => {
    expect(pool.dimension).toBe(384);
    const [fromPool, expected] = await Promise.all([pool.embed(TEXTS), inProcess.embed(TEXTS)]);
    expect(fromPool).toHaveLength(TEXTS.length);
    fromPool.forEach((vector, i) => {
      expect(vector).toHaveLength(384);
      vector.forEach((x, j) => expect(x).toBeCloseTo(expected[i]![j]!, 5));
    });
    const [query] = await pool.embedQueries([TEXTS[0]!]);
    const [expectedQuery] = await inProcess.embedQueries([TEXTS[0]!]);
    expect(query![0]).toBeCloseTo(expectedQuery![0]!, 5);
    expect(query![0]).not.toBeCloseTo(fromPool[0]![0]!, 5); // the query prefix was applied
    expect(await pool.countTokens(TEXTS)).toBe(await inProcess.countTokens(TEXTS));
  });

  it('runs two batches at once while the event loop keeps turning', async () => {
    const batching = new BatchingEmbeddingProvider(pool, {
      maxBatch: 8,
      maxQueue: 1024,
      parallelRuns: 2,
    });
    const many = Array.from({ length: 64 }, (_, i) => `${TEXTS[i % TEXTS.length]} (${i})`);
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 5);
    const started = Date.now();
    const vectors = await batching.embed(many);
    const elapsed = Date.now() - started;
    clearInterval(timer);
    expect(vectors).toHaveLength(64);
    expect(vectors.every((v) => v.length === 384)).toBe(true);
    // In the main thread a run stops the loop for its whole length; here the timer kept firing
    // (at least a tick per 50 ms on a loaded machine).
    expect(ticks).toBeGreaterThan(elapsed / 50);
  });

  it('refuses to start without the compiled worker', async () => {
    await expect(
      OnnxWorkerPool.load({ modelDir: MODEL_DIR, model: MODEL }, 1, join(__dirname, 'nope.js')),
    ).rejects.toThrow('is not built');
  });
});
