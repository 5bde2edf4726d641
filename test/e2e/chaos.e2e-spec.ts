/**
 * The small version of `npm run chaos`: 40 documents ingested while parser-, embedding- and
 * indexing-service are SIGKILLed in turn (and restarted) and Redis is stopped for ten seconds.
 * Every document must end indexed exactly once, with as many vectors and lexical rows as chunks,
 * searches must never answer 500, and a tenant member without access must never see a document.
 * (The full run, with the broker, PostgreSQL and the S3 server, is `npm run chaos`.)
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

jest.setTimeout(900_000);

interface ChaosSummary {
  documents: number;
  indexed: number;
  failed: number;
  lost: number;
  duplicated: number;
  mismatched: number;
  orphans: number;
  search_errors: number;
  searches: { requests: number; ok: number; acl_widened: number };
  faults: Array<{ fault: string; recovery_s: number }>;
}

describe('faults during an ingest (small chaos run)', () => {
  it('indexes every document exactly once, never answers 500 and never widens an ACL', async () => {
    const { stdout } = await run(
      process.execPath,
      [join(__dirname, '../../tools/bench/dist/main.js'), 'chaos'],
      {
        env: {
          ...process.env,
          KB_CHAOS_DOCUMENTS: '40',
          KB_CHAOS_FAULTS:
            'kill parser-service,kill embedding-service,kill indexing-service,stop redis',
          KB_CHAOS_BASE_PORT: '5500',
          KB_CHAOS_SETTLE_S: '300',
        },
        maxBuffer: 16 * 1024 * 1024,
      },
    ).catch((error: { stdout?: string; stderr?: string }) => {
      // The runner exits 1 when a promise was broken; its JSON line still says which.
      if (error.stdout?.includes('{"chaos"')) return { stdout: error.stdout };
      throw new Error(`chaos run failed: ${error.stderr ?? String(error)}`);
    });
    const line = stdout.trim().split('\n').pop()!;
    process.stdout.write(`${line}\n`);
    const { chaos } = JSON.parse(line) as { chaos: ChaosSummary };
    expect(chaos.faults.map((f) => f.fault)).toEqual([
      'kill parser-service',
      'kill embedding-service',
      'kill indexing-service',
      'stop redis 10s',
    ]);
    expect(chaos).toMatchObject({
      documents: 40,
      indexed: 40,
      failed: 0,
      lost: 0,
      duplicated: 0,
      mismatched: 0,
      orphans: 0,
      search_errors: 0,
    });
    expect(chaos.searches.acl_widened).toBe(0);
    expect(chaos.searches.ok).toBeGreaterThan(0);
  });
});
