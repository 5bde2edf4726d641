// `npm start`'s last step: runs all seven services, prints their addresses, restarts one that
// crashes (scripts/lib/supervisor.js), and stops them all on Ctrl-C.
// KB_SERVICES_PORT_BASE=<b> puts them on ports of their own (as scripts/with-services.js).
'use strict';
const { SERVICES, portsFromBase, stopServices } = require('./lib/services');
const { supervise } = require('./lib/supervisor');

async function allReady(procs) {
  for (;;) {
    const answers = await Promise.all(
      procs().map((p) =>
        fetch(`${p.url}/health/ready`).then(
          (r) => r.ok,
          () => false,
        ),
      ),
    );
    if (answers.every(Boolean)) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function main() {
  const ports = portsFromBase(Number(process.env.KB_SERVICES_PORT_BASE ?? 0));
  const say = (line) => process.stderr.write(`supervisor         | ${line}\n`);
  const supervisor = supervise(
    SERVICES.map((s) => s.name),
    { ports, onLine: (name, line) => process.stdout.write(`${name.padEnd(18)} | ${line}\n`) },
    { say },
  );
  let stopping = false;
  const stop = async (signal) => {
    if (stopping) return;
    stopping = true;
    supervisor.stop();
    process.stdout.write(`\n${signal}: stopping services…\n`);
    await stopServices(supervisor.procs());
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  // Ready when every service answers its probe; one that crashes while booting is restarted.
  await allReady(supervisor.procs);
  const rows = supervisor
    .procs()
    .map(
      (p) =>
        `  ${p.name.padEnd(18)} ${p.url}${p.grpcPort ? `  grpc 127.0.0.1:${p.grpcPort}` : ''}  pid ${p.child.pid}`,
    );
  process.stdout.write(
    `\nAll services ready:\n${rows.join('\n')}\n\nA service that crashes is restarted; Ctrl-C stops everything.\n`,
  );
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
