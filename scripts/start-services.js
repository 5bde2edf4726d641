// `npm start`'s last step: runs all seven services, prints their addresses, stops them on Ctrl-C.
'use strict';
const { startServices, waitReady, stopServices } = require('./lib/services');

async function main() {
  const procs = startServices({
    onLine: (name, line) => process.stdout.write(`${name.padEnd(18)} | ${line}\n`),
  });
  let stopping = false;
  const stop = async (signal) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: stopping services…\n`);
    await stopServices(procs);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  for (const proc of procs) {
    proc.child.on('exit', (code) => {
      if (!stopping) {
        process.stderr.write(`${proc.name} exited (code ${code}); stopping the others\n`);
        void stop('exit');
      }
    });
  }
  await waitReady(procs);
  const rows = procs.map(
    (p) => `  ${p.name.padEnd(18)} ${p.url}${p.grpcPort ? `  grpc 127.0.0.1:${p.grpcPort}` : ''}`,
  );
  process.stdout.write(`\nAll services ready:\n${rows.join('\n')}\n\nCtrl-C stops everything.\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
