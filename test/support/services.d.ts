import type { ChildProcess } from 'node:child_process';

export interface RunningService {
  name: string;
  port: number;
  grpcPort?: number;
  url: string;
  child: ChildProcess;
}

export function startServices(options?: {
  env?: NodeJS.ProcessEnv;
  ports?: Record<string, { port?: number; grpcPort?: number }>;
  logDir?: string;
  onLine?: (service: string, line: string) => void;
}): RunningService[];
export function startService(
  name: string,
  options?: {
    env?: NodeJS.ProcessEnv;
    ports?: Record<string, { port?: number; grpcPort?: number }>;
    logDir?: string;
    onLine?: (service: string, line: string) => void;
  },
): RunningService;
export function waitReady(procs: RunningService[], timeoutMs?: number): Promise<void>;
export function stopServices(procs: RunningService[], graceMs?: number): Promise<void>;
