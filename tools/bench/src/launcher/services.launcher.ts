import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** The repository root, from src/launcher or dist/launcher alike. */
export const ROOT = join(__dirname, '..', '..', '..', '..');

export interface RunningService {
  name: string;
  port: number;
  grpcPort?: number;
  url: string;
  child: ChildProcess;
}

export type Ports = Record<string, { port?: number; grpcPort?: number }>;

/**
 * scripts/lib/services.js, the launcher `npm start`, scripts/with-services.js and the e2e suites
 * share: it starts each service from its build output as its own process. Typed here for the
 * tools (test/support/services.d.ts types it for the tests).
 */
export interface ServicesLauncher {
  SERVICES: Array<{ name: string; port: number; grpcPort?: number }>;
  startService(name: string, options?: { ports?: Ports; logDir?: string }): RunningService;
  waitReady(procs: RunningService[], timeoutMs?: number): Promise<void>;
  stopServices(procs: RunningService[], graceMs?: number): Promise<void>;
}

export const launcher = createRequire(__filename)(
  join(ROOT, 'scripts', 'lib', 'services.js'),
) as ServicesLauncher;
