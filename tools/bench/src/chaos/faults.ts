import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { launcher, type Ports, ROOT, type RunningService } from '../launcher/services.launcher';

const run = promisify(execFile);
export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

export interface Fault {
  name: string;
  /** Resolves once the fault is over (the process restarted, the server started again). */
  inject: () => Promise<void>;
}

/** The services' ports for a run at `base`: HTTP base+1 …, gRPC 20000 + base % 1000 + n. */
export function chaosPorts(base: number): Ports {
  return Object.fromEntries(
    launcher.SERVICES.map((s, i) => [
      s.name,
      {
        port: base + i + 1,
        ...(s.grpcPort ? { grpcPort: 20_000 + (base % 1000) + (s.grpcPort % 100) } : {}),
      },
    ]),
  );
}

/**
 * The faults in the order they are injected: SIGKILL of each service in turn (restarted at
 * once), then the local servers through scripts/infra/fault.sh.
 */
export function faults(
  services: Map<string, RunningService>,
  launch: (name: string) => RunningService,
): Fault[] {
  const restartService = (name: string) => async (): Promise<void> => {
    const proc = services.get(name)!;
    proc.child.kill('SIGKILL');
    await new Promise<void>((resolve) =>
      proc.child.exitCode !== null ? resolve() : proc.child.once('exit', () => resolve()),
    );
    services.set(name, launch(name));
  };
  const server = (name: string, down: string, downMs: number) => async (): Promise<void> => {
    const script = join(ROOT, 'scripts', 'infra', 'fault.sh');
    await run('bash', [script, name, down]);
    await sleep(downMs);
    await run('bash', [script, name, 'start']);
  };
  return [
    ...launcher.SERVICES.map((s) => ({ name: `kill ${s.name}`, inject: restartService(s.name) })),
    { name: 'kill kafka', inject: server('kafka', 'kill', 2_000) },
    { name: 'stop postgres 10s', inject: server('postgres', 'stop', 10_000) },
    { name: 'stop redis 10s', inject: server('redis', 'stop', 10_000) },
    { name: 'stop s3 20s', inject: server('s3', 'stop', 20_000) },
  ];
}

/** The faults whose names contain one of `selected` (all when none is selected). */
export const selectFaults = (all: Fault[], selected: string[]): Fault[] =>
  all.filter((fault) => !selected.length || selected.some((name) => fault.name.includes(name)));
