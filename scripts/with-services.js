// Runs a command against the running suite: uses the services `npm start` runs when they answer,
// otherwise starts them (logs in $KB_HOME/logs/services), runs the command, and stops them.
// Usage: node scripts/with-services.js <command> [args...]
// KB_SERVICE_PORT_BASE=<n> starts them on ports n+1… instead (beside another checkout's suite on a
// shared machine) and points the command at them (KB_DOCUMENTS_URL, KB_GRPC_ADDRESS).
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { SERVICES, startServices, waitReady, stopServices } = require('./lib/services');

const base = Number(process.env.KB_SERVICE_PORT_BASE ?? 0);
/** Every service's ports: the defaults, or base+1… (HTTP) and base+51… (gRPC). */
const PORTS = Object.fromEntries(
  SERVICES.map((s, i) => [
    s.name,
    base
      ? { port: base + 1 + i, ...(s.grpcPort ? { grpcPort: base + 51 + i } : {}) }
      : { port: s.port, ...(s.grpcPort ? { grpcPort: s.grpcPort } : {}) },
  ]),
);

async function allReady() {
  const answers = await Promise.all(
    SERVICES.map((s) =>
      fetch(`http://127.0.0.1:${PORTS[s.name].port}/health/ready`).then(
        (r) => r.ok,
        () => false,
      ),
    ),
  );
  return answers.every(Boolean);
}

async function main() {
  const [command, ...args] = process.argv.slice(2);
  if (!command) throw new Error('usage: with-services.js <command> [args...]');
  let procs = [];
  if (!(await allReady())) {
    const logDir = path.join(process.env.KB_HOME ?? '.', 'logs', 'services');
    fs.mkdirSync(logDir, { recursive: true });
    process.stderr.write(`starting the services (logs in ${logDir})\n`);
    procs = startServices({ logDir, ports: PORTS });
    await waitReady(procs);
  }
  const child = spawn(command, args, {
    stdio: 'inherit',
    env: {
      ...process.env,
      KB_DOCUMENTS_URL: `http://127.0.0.1:${PORTS['document-service'].port}`,
      KB_GRPC_ADDRESS: `127.0.0.1:${PORTS['query-service'].grpcPort}`,
      KB_EMBEDDING_URL: `http://127.0.0.1:${PORTS['embedding-service'].port}`,
    },
  });
  const code = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  await stopServices(procs);
  process.exit(code);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
