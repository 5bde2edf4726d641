// Runs a command against the running suite: uses the services `npm start` runs when they answer,
// otherwise starts them (logs in $KB_HOME/logs/services), runs the command, and stops them.
// Usage: node scripts/with-services.js <command> [args...]
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { SERVICES, startServices, waitReady, stopServices } = require('./lib/services');

async function allReady() {
  const answers = await Promise.all(
    SERVICES.map((s) =>
      fetch(`http://127.0.0.1:${s.port}/health/ready`).then(
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
    procs = startServices({ logDir });
    await waitReady(procs);
  }
  const child = spawn(command, args, { stdio: 'inherit' });
  const code = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  await stopServices(procs);
  process.exit(code);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
