import type { ChildProcess } from 'node:child_process';

export interface RunningService {
  name: string;
  port: number;
  grpcPort?: number;
  url: string;
  child: ChildProcess;
}

export const SERVICES: Array<{ name: string; port: number; grpcPort?: number }>;
export const DATABASE_ROLES: Record<string, { role: string; vectors?: boolean }>;
export function databaseEnv(
  name: string,
  env?: NodeJS.ProcessEnv,
): { DATABASE_URL?: string; VECTOR_DATABASE_URL?: string };
export function serviceEnv(name: string, env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
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
