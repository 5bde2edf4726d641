// `npm run chaos`'s runner (scripts/chaos.sh brings the servers up and builds first). Ingests
// KB_CHAOS_DOCUMENTS documents (1,000; CISI abstracts, each with a unique marker) while faults are
// injected one after another: SIGKILL of each service in turn (restarted at once), a SIGKILL and
// restart of the Kafka broker, PostgreSQL stopped, Redis stopped, the S3 server stopped. Searches
// run all along, as the owner and as a tenant member who may read nothing. Then it waits for the
// pipeline to settle and checks every document against the databases: indexed exactly once, as
// many vectors and lexical rows as chunks, nothing of another version, nothing orphaned.
// The last line is one JSON object: {"chaos":{...}}. Exit code 1 when any promise was broken.
//
// KB_CHAOS_FAULTS picks faults by name (comma-separated; default all), KB_CHAOS_BASE_PORT moves
// the services' ports (default 7000: HTTP 7001-7006, gRPC 20751/20761).
'use strict';
const { execFile } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { promisify } = require('node:util');

const { Client } = require('pg');

const { ROOT, SERVICES, startService, stopServices, waitReady } = require('./lib/services');

const run = promisify(execFile);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const DOCUMENTS = Number(process.env.KB_CHAOS_DOCUMENTS ?? 1000);
const BASE = Number(process.env.KB_CHAOS_BASE_PORT ?? 7000);
const SETTLE_MS = Number(process.env.KB_CHAOS_SETTLE_S ?? 900) * 1000;
const DATASET = process.env.KB_BENCH_DATASET ?? path.join(ROOT, 'test', 'fixtures', 'cisi');
const LOG_DIR = path.join(process.env.KB_LOG_DIR ?? '.', 'chaos');

const PORTS = Object.fromEntries(
  SERVICES.map((s, i) => [
    s.name,
    {
      port: BASE + i + 1,
      ...(s.grpcPort ? { grpcPort: 20_000 + (BASE % 1000) + (s.grpcPort % 100) } : {}),
    },
  ]),
);
const url = (service) => `http://127.0.0.1:${PORTS[service].port}`;

/** The faults in the order they are injected; each `inject` resolves once the fault is over. */
function faults(services) {
  const restartService = (name) => async () => {
    const proc = services.get(name);
    proc.child.kill('SIGKILL');
    await new Promise((resolve) =>
      proc.child.exitCode !== null ? resolve() : proc.child.once('exit', resolve),
    );
    services.set(name, launch(name));
  };
  const server = (name, down, downMs) => async () => {
    await run('bash', [path.join(ROOT, 'scripts/infra/fault.sh'), name, down]);
    await sleep(downMs);
    await run('bash', [path.join(ROOT, 'scripts/infra/fault.sh'), name, 'start']);
  };
  return [
    ...SERVICES.map((s) => ({ name: `kill ${s.name}`, inject: restartService(s.name) })),
    { name: 'kill kafka', inject: server('kafka', 'kill', 2_000) },
    { name: 'stop postgres 10s', inject: server('postgres', 'stop', 10_000) },
    { name: 'stop redis 10s', inject: server('redis', 'stop', 10_000) },
    { name: 'stop s3 20s', inject: server('s3', 'stop', 20_000) },
  ];
}

function launch(name) {
  return startService(name, { ports: PORTS, logDir: LOG_DIR });
}

async function token(tenant, user, roles) {
  const cli = path.join(ROOT, 'apps/kb-cli/dist/main.js');
  const { stdout } = await run(process.execPath, [
    cli,
    'token',
    '--tenant',
    tenant,
    '--user',
    user,
    '--roles',
    roles,
  ]);
  return stdout.trim();
}

/** Sends one upload until the service acknowledges it, as a client honouring 503s would. */
async function upload(owner, doc) {
  for (let attempt = 0; ; attempt++) {
    const form = new FormData();
    form.append('file', new Blob([doc.text], { type: 'text/plain' }), `${doc.marker}.txt`);
    form.append('title', doc.title);
    try {
      const response = await fetch(`${url('document-service')}/v1/documents`, {
        method: 'POST',
        body: form,
        headers: { authorization: `Bearer ${owner}` },
        signal: AbortSignal.timeout(30_000),
      });
      if (response.status === 202 || response.status === 200) {
        return { id: (await response.json()).id, status: response.status, attempts: attempt + 1 };
      }
      if (response.status < 500 && response.status !== 429) {
        throw new Error(`upload ${doc.marker}: ${response.status} ${await response.text()}`);
      }
      const retryAfter = Number(response.headers.get('retry-after') ?? 1);
      await sleep(Math.min(10, retryAfter) * 1000);
    } catch (error) {
      if (String(error).includes('upload ')) throw error;
      await sleep(Math.min(5_000, 250 * 2 ** Math.min(attempt, 5)));
    }
  }
}

/** The running services by name; a fault replaces an entry when it restarts one. */
const services = new Map();

async function main() {
  fs.mkdirSync(LOG_DIR, { recursive: true });
  const tenant = `chaos-${randomUUID().slice(0, 8)}`;
  const owner = await token(tenant, 'owner', 'editor');
  const outsider = await token(tenant, 'outsider', 'editor');
  const lines = fs.readFileSync(path.join(DATASET, 'corpus.jsonl'), 'utf8').trim().split('\n');
  const docs = Array.from({ length: DOCUMENTS }, (_, i) => {
    const source = JSON.parse(lines[i % lines.length]);
    const marker = `zqchaos${i}x${randomUUID().slice(0, 6)}`;
    return {
      marker,
      title: source.title,
      text: `${source.title}\n\n${source.text}\n\nMarker ${marker}.`,
    };
  });

  for (const s of SERVICES) services.set(s.name, launch(s.name));
  await waitReady([...services.values()]);
  const started = Date.now();

  // Searches all along: as the owner (must answer, never 500) and as an outsider (must see none).
  const searches = {
    requests: 0,
    ok: 0,
    unavailable: 0,
    server_errors: 0,
    failed_to_connect: 0,
    acl_widened: 0,
  };
  let searching = true;
  const searcher = (async () => {
    while (searching) {
      const asOwner = Math.random() < 0.5;
      const uploaded = docs.filter((d) => d.id);
      const query =
        asOwner && uploaded.length
          ? uploaded[Math.floor(Math.random() * uploaded.length)].marker
          : 'classification libraries';
      searches.requests += 1;
      try {
        const response = await fetch(`${url('query-service')}/v1/search`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${asOwner ? owner : outsider}`,
          },
          body: JSON.stringify({ query, topK: 10, mode: asOwner ? 'lexical' : 'hybrid' }),
          signal: AbortSignal.timeout(15_000),
        });
        if (response.status === 200) {
          searches.ok += 1;
          const body = await response.json();
          if (!asOwner && body.hits.length > 0) searches.acl_widened += 1;
        } else if (response.status === 503) searches.unavailable += 1;
        else searches.server_errors += 1;
      } catch {
        searches.failed_to_connect += 1; // the process was being restarted
      }
      await sleep(200);
    }
  })();

  const selected = (process.env.KB_CHAOS_FAULTS ?? '').split(',').filter(Boolean);
  const schedule = faults(services).filter(
    (fault) => !selected.length || selected.some((name) => fault.name.includes(name)),
  );
  // Uploads are spread over the whole fault schedule (about 35 s a fault here, or
  // KB_CHAOS_SPREAD_S), four at a time, so every fault lands in the middle of the ingest.
  const spreadMs = Number(process.env.KB_CHAOS_SPREAD_S ?? schedule.length * 35) * 1000;
  let next = 0;
  let duplicatesAnswered = 0;
  const uploader = Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < docs.length) {
        const index = next++;
        const doc = docs[index];
        await sleep(started + (index * spreadMs) / docs.length - Date.now());
        const result = await upload(owner, doc);
        doc.id = result.id;
        if (result.status === 200) duplicatesAnswered += 1;
      }
    }),
  );

  const injected = [];
  for (const fault of schedule) {
    await sleep(5_000);
    const at = Date.now();
    process.stderr.write(`chaos: ${fault.name}\n`);
    await fault.inject();
    const restored = Date.now();
    await waitReady([...services.values()], 300_000);
    injected.push({
      fault: fault.name,
      at_s: Math.round((at - started) / 1000),
      down_s: Math.round((restored - at) / 100) / 10,
      recovery_s: Math.round((Date.now() - restored) / 100) / 10,
    });
  }
  await uploader;
  process.stderr.write(`chaos: ${docs.length} uploads acknowledged; waiting for the pipeline\n`);

  // Settle: every acknowledged document reaches indexed or failed.
  const statusOf = new Map();
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    statusOf.clear();
    let cursor = null;
    do {
      const query = `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await (
        await fetch(`${url('document-service')}/v1/documents?${query}`, {
          headers: { authorization: `Bearer ${owner}` },
        })
      ).json();
      for (const d of page.items) statusOf.set(d.id, d);
      cursor = page.nextCursor;
    } while (cursor);
    const pending = docs.filter((d) => !['indexed', 'failed'].includes(statusOf.get(d.id)?.status));
    if (pending.length === 0 || Date.now() > deadline) break;
    await sleep(2_000);
  }
  searching = false;
  await searcher;

  const counts = await countIndexes(tenant, statusOf);
  await stopServices([...services.values()]);
  const ids = new Set(docs.map((d) => d.id));
  const failed = docs.filter((d) => statusOf.get(d.id)?.status === 'failed');
  const summary = {
    documents: docs.length,
    indexed: docs.filter((d) => statusOf.get(d.id)?.status === 'indexed').length,
    failed: failed.length,
    failure_reasons: countBy(failed.map((d) => statusOf.get(d.id).failure?.reason)),
    lost:
      docs.filter((d) => !statusOf.has(d.id)).length +
      docs.filter((d) => !['indexed', 'failed'].includes(statusOf.get(d.id)?.status)).length,
    duplicated: statusOf.size - ids.size + counts.duplicated,
    mismatched: counts.mismatched,
    orphans: counts.orphans,
    duplicate_uploads_answered: duplicatesAnswered,
    faults: injected,
    searches,
    search_errors: searches.server_errors,
    max_recovery_s: Math.max(0, ...injected.map((f) => f.recovery_s)),
    elapsed_s: Math.round((Date.now() - started) / 1000),
  };
  process.stdout.write(`${JSON.stringify({ chaos: summary })}\n`);
  const broken =
    summary.lost +
    summary.duplicated +
    summary.mismatched +
    summary.orphans +
    summary.failed +
    summary.search_errors +
    searches.acl_widened;
  process.exit(broken > 0 ? 1 : 0);
}

/**
 * From the databases: per document, vectors and lexical rows of its current version against its
 * chunk count (mismatched), rows of another version or of no known document (orphans), and
 * chunk indexes present twice (duplicated).
 */
async function countIndexes(tenant, statusOf) {
  const vectors = new Client({ connectionString: process.env.VECTOR_DATABASE_URL });
  const lexical = new Client({ connectionString: process.env.DATABASE_URL });
  await vectors.connect();
  await lexical.connect();
  try {
    const vectorRows = await vectors.query(
      `SELECT document_id, document_version, chunk_index FROM kb_vectors_384 WHERE namespace = $1`,
      [tenant],
    );
    const lexicalRows = await lexical.query(
      `SELECT document_id, document_version, chunk_index FROM search_index.chunks WHERE tenant_id = $1`,
      [tenant],
    );
    let mismatched = 0;
    let orphans = 0;
    let duplicated = 0;
    for (const rows of [vectorRows.rows, lexicalRows.rows]) {
      const perDocument = new Map();
      const seen = new Set();
      for (const row of rows) {
        const doc = statusOf.get(row.document_id);
        if (!doc || doc.status !== 'indexed' || row.document_version !== doc.version) {
          orphans += 1;
          continue;
        }
        const key = `${row.document_id}#${row.chunk_index}`;
        if (seen.has(key)) duplicated += 1;
        seen.add(key);
        perDocument.set(row.document_id, (perDocument.get(row.document_id) ?? 0) + 1);
      }
      for (const doc of statusOf.values()) {
        if (doc.status === 'indexed' && (perDocument.get(doc.id) ?? 0) !== doc.chunkCount)
          mismatched += 1;
      }
    }
    return { mismatched, orphans, duplicated };
  } finally {
    await vectors.end();
    await lexical.end();
  }
}

function countBy(values) {
  const counts = {};
  for (const value of values) counts[value ?? 'unknown'] = (counts[value ?? 'unknown'] ?? 0) + 1;
  return counts;
}

main().catch(async (error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  // No service may outlive a failed run: they would hold the ports of the next one.
  await stopServices([...services.values()], 5_000);
  process.exit(1);
});
