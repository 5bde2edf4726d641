// Launches the seven services as separate OS processes. Used by `npm start` and the e2e test.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');

/** name → default HTTP port (and gRPC port where the service has one). */
/**
 * Node flags per service, as the chart sets them (`services.<name>.nodeOptions`): query-service's
 * larger young generation collects a search's short-lived garbage less often (docs/adr/0029).
 */
const NODE_FLAGS = { 'query-service': ['--max-semi-space-size=32'] };

const SERVICES = [
  { name: 'document-service', port: 3001 },
  { name: 'parser-service', port: 3002 },
  { name: 'embedding-service', port: 3003 },
  { name: 'indexing-service', port: 3004 },
  { name: 'query-service', port: 3005, grpcPort: 50051 },
  { name: 'acl-service', port: 3006, grpcPort: 50061 },
  { name: 'webhook-service', port: 3007 },
];

/**
 * Each service's own PostgreSQL role (docs/adr/0031, "Locally"; scripts/infra/up.sh creates them,
 * each with its name as its local-only password): `vectors` also for the pgvector database.
 * parser-service has no database. KB_SHARED_DB_ROLE=1 keeps the shared admin URLs for all.
 */
const DATABASE_ROLES = {
  'document-service': { role: 'kb_document' },
  'embedding-service': { role: 'kb_embedding' },
  'indexing-service': { role: 'kb_indexing', vectors: true },
  'query-service': { role: 'kb_query', vectors: true },
  'acl-service': { role: 'kb_acl' },
  'webhook-service': { role: 'kb_webhook' },
};

/** `url` with `role` (and its local password) in place of the user; undefined stays undefined. */
function asRole(url, role) {
  if (!url) return undefined;
  const parsed = new URL(url);
  parsed.username = role;
  parsed.password = role;
  return parsed.toString();
}

/**
 * The database settings service `name` runs with, given `env`: its role's DATABASE_URL (and
 * VECTOR_DATABASE_URL for the two services that use the vector store), no URL it does not use;
 * `env`'s own URLs when KB_SHARED_DB_ROLE=1. The host, port and database stay `env`'s, so a test
 * that points a service at another server still does.
 */
function databaseEnv(name, env = process.env) {
  const shared = { DATABASE_URL: env.DATABASE_URL, VECTOR_DATABASE_URL: env.VECTOR_DATABASE_URL };
  if (['1', 'true'].includes(env.KB_SHARED_DB_ROLE ?? '')) return shared;
  const own = DATABASE_ROLES[name];
  return {
    DATABASE_URL: own ? asRole(env.DATABASE_URL, own.role) : undefined,
    VECTOR_DATABASE_URL: own?.vectors ? asRole(env.VECTOR_DATABASE_URL, own.role) : undefined,
  };
}

/** `env` with service `name`'s database settings (databaseEnv): unset ones removed. */
function serviceEnv(name, env = process.env) {
  const result = { ...env };
  for (const [key, value] of Object.entries(databaseEnv(name, env))) {
    if (value === undefined) delete result[key];
    else result[key] = value;
  }
  return result;
}

/**
 * The ports of a base (KB_SERVICES_PORT_BASE): HTTP base+1 … base+7 in SERVICES' order,
 * query-service gRPC base+51, acl-service gRPC base+61; {} (the defaults) for 0 or none.
 */
function portsFromBase(base) {
  if (!base) return {};
  return Object.fromEntries(
    SERVICES.map((s, i) => [
      s.name,
      { port: base + i + 1, ...(s.grpcPort ? { grpcPort: base + (s.grpcPort % 100) } : {}) },
    ]),
  );
}

/**
 * Starts every service with `env` plus its own HOST/PORT. `ports` may override the defaults
 * (`{ 'query-service': { port, grpcPort } }`). Output goes to `logDir/<service>.log`, or is
 * passed to `onLine(service, line)` when given.
 */
function startServices({ env = process.env, ports = {}, logDir, onLine } = {}) {
  return SERVICES.map((service) => startService(service.name, { env, ports, logDir, onLine }));
}

/** Starts one service by name (also used to restart one in tests); same options as startServices. */
function startService(name, { env = process.env, ports = {}, logDir, onLine } = {}) {
  const service = SERVICES.find((s) => s.name === name);
  if (!service) throw new Error(`unknown service ${name}`);
  const port = ports[service.name]?.port ?? service.port;
  const grpcPort = ports[service.name]?.grpcPort ?? service.grpcPort;
  const entry = path.join(ROOT, 'apps', service.name, 'dist', 'main.js');
  if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: run 'npm run build' first`);
  // KB_CPU_PROFILE_DIR: each service writes a V8 CPU profile there when it exits (its worker
  // threads too), for `npm run bench` runs worth profiling; `--cpu-prof` is refused in NODE_OPTIONS.
  const profile = env.KB_CPU_PROFILE_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${path.join(env.KB_CPU_PROFILE_DIR, name)}`]
    : [];
  // The chart's `services.<name>.nodeOptions`, as flags: query-service's larger young generation.
  const flags = NODE_FLAGS[name] ?? [];
  const child = spawn(process.execPath, [...flags, ...profile, entry], {
    cwd: ROOT,
    env: {
      // Its own database role's URLs (serviceEnv), unless KB_SHARED_DB_ROLE=1.
      ...serviceEnv(name, env),
      HOST: '127.0.0.1',
      PORT: String(port),
      ...(grpcPort ? { GRPC_HOST: '127.0.0.1', GRPC_PORT: String(grpcPort) } : {}),
      // query-service reads documents through document-service's REST API.
      DOCUMENT_SERVICE_URL: `http://127.0.0.1:${ports['document-service']?.port ?? 3001}`,
      // document-service asks embedding-service which models it serves.
      EMBEDDING_SERVICE_URL: `http://127.0.0.1:${ports['embedding-service']?.port ?? 3003}`,
      // document-service and query-service ask acl-service for callers' principals.
      ACL_GRPC_ADDRESS: `127.0.0.1:${ports['acl-service']?.grpcPort ?? 50061}`,
      // Local receivers (the tests', a developer's) listen on loopback: allowed here, never by
      // default in a cluster (docs/adr/0027).
      WEBHOOK_ALLOW_PRIVATE_URLS: env.WEBHOOK_ALLOW_PRIVATE_URLS ?? 'true',
      // Both services run the model as two one-thread runs at once, in worker threads: they use
      // both cores without a two-thread run's wait for its slower thread when BM25 or Postgres
      // holds the other core (docs/adr/0029, Ingest; query-service: docs/performance.md,
      // 2026-11-27, c32 misses 49–51 → 64–92 q/s).
      ...(service.name === 'embedding-service'
        ? {
            EMBEDDING_RUNS: env.KB_EMBEDDING_SERVICE_RUNS ?? '2',
            EMBEDDING_THREADS: env.KB_EMBEDDING_SERVICE_THREADS ?? '1',
          }
        : {}),
      ...(service.name === 'query-service'
        ? {
            EMBEDDING_RUNS: env.KB_QUERY_SERVICE_RUNS ?? '2',
            EMBEDDING_THREADS: env.KB_QUERY_SERVICE_THREADS ?? '1',
            // Each local stack (npm start, the bench, each test suite) keeps its own warm set
            // (docs/adr/0062): tests never take up a benchmark's million chunks.
            LEXICAL_WARM_KEY: env.LEXICAL_WARM_KEY ?? `kb:lexical:warm:v1:local:${port}`,
          }
        : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = logDir
    ? fs.createWriteStream(path.join(logDir, `${service.name}.log`), { flags: 'a' })
    : undefined;
  for (const stream of [child.stdout, child.stderr]) {
    let buffered = '';
    stream.on('data', (data) => {
      log?.write(data);
      if (!onLine) return;
      buffered += data.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) onLine(service.name, line);
    });
  }
  child.on('exit', () => log?.end());
  return { ...service, port, grpcPort, url: `http://127.0.0.1:${port}`, child };
}

/** Resolves when every service answers its readiness probe; rejects on timeout or early exit. */
async function waitReady(procs, timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs;
  await Promise.all(
    procs.map(async (proc) => {
      for (;;) {
        if (proc.child.exitCode !== null) {
          throw new Error(
            `${proc.name} exited with code ${proc.child.exitCode} before it was ready`,
          );
        }
        try {
          const response = await fetch(`${proc.url}/health/ready`);
          if (response.ok) return;
        } catch {
          // not listening yet
        }
        if (Date.now() > deadline)
          throw new Error(`${proc.name} was not ready within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }),
  );
}

/** SIGTERM to each service, SIGKILL after `graceMs`. */
async function stopServices(procs, graceMs = 15_000) {
  await Promise.all(
    procs.map(
      (proc) =>
        new Promise((resolve) => {
          if (proc.child.exitCode !== null || proc.child.signalCode !== null) return resolve();
          const timer = setTimeout(() => proc.child.kill('SIGKILL'), graceMs);
          proc.child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          proc.child.kill('SIGTERM');
        }),
    ),
  );
}

module.exports = {
  SERVICES,
  DATABASE_ROLES,
  databaseEnv,
  serviceEnv,
  portsFromBase,
  startServices,
  startService,
  waitReady,
  stopServices,
  ROOT,
};

// `node scripts/lib/services.js run <service> <command> [args...]`: runs a command with the
// service's database settings (serviceEnv), e.g. its migrate.js in scripts/migrate.sh.
if (require.main === module) {
  const [verb, name, command, ...args] = process.argv.slice(2);
  if (verb !== 'run' || !name || !command || !SERVICES.some((s) => s.name === name)) {
    process.stderr.write('usage: services.js run <service> <command> [args...]\n');
    process.exit(2);
  }
  const child = spawn(command, args, { stdio: 'inherit', env: serviceEnv(name) });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
