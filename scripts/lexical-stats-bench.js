#!/usr/bin/env node
// How long one BM25 search takes on a corpus of a few thousand chunks with ACLs, as an admin (no
// ACL filter) and as a reader of about a quarter of the chunks (docs/adr/0019 keeps the figures).
// Usage: source scripts/infra/env.sh && npx tsc -b tsconfig.json && node scripts/lexical-stats-bench.js
// Env: KB_BENCH_CHUNKS (default 5000), KB_BENCH_QUERIES (default 200); KB_BENCH_BASELINE, the path
// of another build of @kb/lexical-index (e.g. main's dist copied aside), times it too, query by
// query in alternation, so a busy machine slows both alike. It migrates a throw-away schema of
// DATABASE_URL and drops it at the end.
'use strict';
const { randomUUID } = require('node:crypto');
const { createDatabase, createPool, migrateToLatest } = require('@kb/database');
const { lexicalIndexMigrations, PgLexicalIndex } = require('@kb/lexical-index');

const CHUNKS = Number(process.env.KB_BENCH_CHUNKS ?? 5000);
const QUERIES = Number(process.env.KB_BENCH_QUERIES ?? 200);
const GROUPS = 8;

/** A deterministic generator, so before and after run on the same corpus and queries. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const rand = random(42);
const syllables = [
  'ka',
  'lo',
  'mer',
  'vin',
  'dra',
  'sel',
  'tor',
  'qua',
  'nim',
  'bex',
  'fol',
  'gru',
];
const vocabulary = Array.from({ length: 4000 }, (_, i) => {
  let word = '';
  for (let n = i + 1; n > 0; n = Math.floor(n / syllables.length)) {
    word += syllables[n % syllables.length];
  }
  return `${word}x`;
});
/** Zipf-like: low ranks are frequent, as in natural text. */
const word = () => vocabulary[Math.floor(vocabulary.length ** rand()) - 1];
const text = (length) => Array.from({ length }, word).join(' ');

async function main() {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: source scripts/infra/env.sh');
  const schema = `lexical_bench_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  const admin = createPool({ url, schema, maxConnections: 1 });
  await migrateToLatest(createDatabase(admin), schema, lexicalIndexMigrations);
  const index = new PgLexicalIndex({ url, schema });
  const baseline = process.env.KB_BENCH_BASELINE
    ? new (require(require('node:path').resolve(process.env.KB_BENCH_BASELINE)).PgLexicalIndex)({
        url,
        schema,
      })
    : undefined;
  const indexes = baseline ? { current: index, baseline } : { current: index };
  const space = 'bench';
  try {
    for (let start = 0; start < CHUNKS; start += 500) {
      await index.upsert(
        space,
        Array.from({ length: Math.min(500, CHUNKS - start) }, (_, i) => {
          const n = start + i;
          return {
            documentId: `doc-${Math.floor(n / 10)}`,
            documentVersion: 1,
            chunkIndex: n % 10,
            title: `Document ${Math.floor(n / 10)}`,
            text: text(80 + Math.floor(rand() * 120)),
            startOffset: 0,
            endOffset: 1,
            attributes: {
              knowledgeBaseIds: ['default'],
              tags: [],
              metadata: {},
              uploadedAt: 0,
              principals: [`group:g${Math.floor(n / 10) % GROUPS}`],
            },
          };
        }),
      );
    }
    await admin.query(`ANALYZE ${schema}.chunks; ANALYZE ${schema}.postings`);
    const queries = Array.from({ length: QUERIES }, () => text(2 + Math.floor(rand() * 4)));
    const callers = {
      admin: undefined,
      reader: ['user:u1', 'group:g0', 'group:g1'], // a quarter of the chunks
    };
    const report = { chunks: CHUNKS, queries: QUERIES };
    for (const [name, principals] of Object.entries(callers)) {
      const times = Object.fromEntries(Object.keys(indexes).map((key) => [key, []]));
      for (const query of queries.slice(0, 10)) {
        for (const each of Object.values(indexes)) {
          await each.search(space, { text: query, topK: 100, principals }); // warm-up
        }
      }
      for (const [i, query] of queries.entries()) {
        const order = Object.entries(indexes);
        if (i % 2) order.reverse();
        for (const [key, each] of order) {
          const started = process.hrtime.bigint();
          await each.search(space, { text: query, topK: 100, principals });
          times[key].push(Number(process.hrtime.bigint() - started) / 1e6);
        }
      }
      report[name] = Object.fromEntries(
        Object.entries(times).map(([key, list]) => {
          list.sort((a, b) => a - b);
          const at = (q) => +list[Math.floor(list.length * q)].toFixed(2);
          return [key, { p50_ms: at(0.5), p95_ms: at(0.95) }];
        }),
      );
    }
    process.stdout.write(`${JSON.stringify({ lexical_stats_bench: report })}\n`);
  } finally {
    await index.close();
    await baseline?.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
