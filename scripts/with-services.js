// Runs a command against the running suite: uses the services `npm start` runs when they answer,
// otherwise starts them (logs in $KB_HOME/logs/services), runs the command, and stops them.
// Usage: node scripts/with-services.js <command> [args...]
// KB_SERVICES_PORT_BASE=<b> puts the services on ports of their own (HTTP b+1 … b+6, query-service
// gRPC b+51, acl-service gRPC b+61) and tells the command through KB_DOCUMENTS_URL,
// KB_EMBEDDING_URL, KB_GRPC_ADDRESS and KB_QUERY_URL, so a run never talks to another checkout's services.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const {
  SERVICES,
  portsFromBase,
  startServices,
  waitReady,
  stopServices,
} = require('./lib/services');

async function allReady(ports) {
  const answers = await Promise.all(
    SERVICES.map((s) =>
      fetch(`http://127.0.0.1:${ports[s.name]?.port ?? s.port}/health/ready`).then(
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
  const base = Number(process.env.KB_SERVICES_PORT_BASE ?? 0);
  const ports = portsFromBase(base);
  const env = { ...process.env };
  if (base) {
    env.KB_DOCUMENTS_URL = `http://127.0.0.1:${ports['document-service'].port}`;
    env.KB_EMBEDDING_URL = `http://127.0.0.1:${ports['embedding-service'].port}`;
    env.KB_GRPC_ADDRESS = `127.0.0.1:${ports['query-service'].grpcPort}`;
    env.KB_QUERY_URL = `http://127.0.0.1:${ports['query-service'].port}`;
  }
  let procs = [];
  if (!(await allReady(ports))) {
    const logDir = path.join(process.env.KB_HOME ?? '.', 'logs', 'services');
    fs.mkdirSync(logDir, { recursive: true });
    process.stderr.write(`starting the services (logs in ${logDir})\n`);
    procs = startServices({ logDir, ports });
    await waitReady(procs);
  }
  const child = spawn(command, args, { stdio: 'inherit', env });
  const code = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  await stopServices(procs);
  process.exit(code);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
