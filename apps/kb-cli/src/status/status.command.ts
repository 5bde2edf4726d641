import type { Command } from 'commander';

import { formatTable } from '../collections/table';
import { formatPipelineMetrics, pipelineMetricsOf } from './pipeline-metrics';

/** The services in start order, each at base + its position (3001 … 3007 by default). */
export const SERVICE_NAMES = [
  'document-service',
  'parser-service',
  'embedding-service',
  'indexing-service',
  'query-service',
  'acl-service',
  'webhook-service',
] as const;

export interface ServiceStatus {
  service: string;
  url: string;
  /** `ready`, `not ready`, or `unreachable` when nothing answered. */
  status: 'ready' | 'not ready' | 'unreachable';
  /** Checks that failed (or were degraded), with why. */
  reasons: Record<string, string>;
}

/** One service's `GET /health/ready`: 200 ready, 503 with the failing checks, else unreachable. */
export async function readinessOf(
  service: string,
  url: string,
  timeoutMs = 3000,
): Promise<ServiceStatus> {
  try {
    const response = await fetch(`${url}/health/ready`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await response.json().catch(() => ({}))) as {
      degraded?: Record<string, string>;
      error?: { details?: { reasons?: Record<string, string> } };
    };
    if (response.ok) return { service, url, status: 'ready', reasons: body.degraded ?? {} };
    const reasons = body.error?.details?.reasons ?? {};
    return { service, url, status: 'not ready', reasons };
  } catch {
    return { service, url, status: 'unreachable', reasons: {} };
  }
}

export function formatStatus(statuses: ServiceStatus[]): string {
  return formatTable(
    ['service', 'url', 'status', 'reasons'],
    statuses.map((s) => [
      s.service,
      s.url,
      s.status,
      Object.entries(s.reasons)
        .map(([check, why]) => `${check}: ${why}`)
        .join('; '),
    ]),
  );
}

/** `kb status`: the readiness of every service; exits 1 when one is not ready. */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description(
      "Each service's readiness (GET /health/ready) with the checks that fail, each consumer group's lag and the documents waiting in each pipeline stage (GET /metrics); exits 1 when a service is not ready.",
    )
    .option('--host <host>', 'where the services run', '127.0.0.1')
    .option(
      '--port-base <n>',
      'the services listen on base+1 … base+7 (KB_SERVICES_PORT_BASE; default 3000)',
      (v) => Number.parseInt(v, 10),
      Number(process.env['KB_SERVICES_PORT_BASE'] || 3000),
    )
    .option('--json', 'print the statuses as one JSON object')
    .action(async (options: { host: string; portBase: number; json?: boolean }) => {
      const services = SERVICE_NAMES.map((service, i) => ({
        service,
        url: `http://${options.host}:${options.portBase + i + 1}`,
      }));
      const [statuses, pipeline] = await Promise.all([
        Promise.all(services.map(({ service, url }) => readinessOf(service, url))),
        pipelineMetricsOf(services),
      ]);
      process.stdout.write(
        options.json
          ? `${JSON.stringify({ services: statuses, ...pipeline })}\n`
          : `${formatStatus(statuses)}\n${formatPipelineMetrics(pipeline)}`,
      );
      if (statuses.some((s) => s.status !== 'ready')) process.exitCode = 1;
    });
}
