import { DomainError, ErrorKind } from '@kb/errors';
import { serveMetrics } from '@kb/observability';
import { Controller, Get, HttpCode, Inject, Injectable, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';

import { Public } from './auth/index';

export enum HealthErrorCode {
  NotReady = 'not_ready',
  MetricsDisabled = 'metrics_disabled',
}

const KIND: Record<HealthErrorCode, ErrorKind> = {
  [HealthErrorCode.NotReady]: ErrorKind.Unavailable,
  [HealthErrorCode.MetricsDisabled]: ErrorKind.NotFound,
};

export class HealthError extends DomainError<HealthErrorCode> {
  constructor(code: HealthErrorCode, message: string, details?: unknown) {
    super(code, KIND[code], message, details);
  }
}

/**
 * A readiness condition: a name and a probe that resolves true when satisfied, and optionally
 * what `/health/ready` should tell about it besides (e.g. which model is loaded), under its name.
 */
export interface ReadinessCheck {
  name: string;
  check(): Promise<boolean>;
  details?(): unknown;
}

/** What `GET /health/ready` answers when ready (not ready: a 503 with the same in `details`). */
export interface ReadinessReport {
  status: 'ready';
  checks: Record<string, boolean>;
  /** Present when a check describes itself (`ReadinessCheck.details`), keyed by its name. */
  details?: Record<string, unknown>;
}

export const READINESS_CHECKS = Symbol('READINESS_CHECKS');

@Injectable()
export class Readiness {
  constructor(@Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[]) {}

  async evaluate(): Promise<Record<string, boolean>> {
    const entries = await Promise.all(
      this.checks.map(async (c) => [c.name, await c.check().catch(() => false)] as const),
    );
    return Object.fromEntries(entries);
  }

  /** Each describing check's details, by name; undefined when no check describes itself. */
  details(): Record<string, unknown> | undefined {
    const described = this.checks.filter((c) => c.details);
    if (described.length === 0) return undefined;
    return Object.fromEntries(described.map((c) => [c.name, c.details?.()]));
  }
}

@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly readiness: Readiness) {}

  /** Alive while the event loop turns; never checks dependencies (a restart would not fix them). */
  @Get('live')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(): Promise<ReadinessReport> {
    const checks = await this.readiness.evaluate();
    const details = this.readiness.details();
    if (Object.values(checks).some((ok) => !ok)) {
      throw new HealthError(HealthErrorCode.NotReady, 'service is not ready', {
        checks,
        ...(details ? { details } : {}),
      });
    }
    return { status: 'ready', checks, ...(details ? { details } : {}) };
  }
}

/** Prometheus scrape endpoint: the process's OpenTelemetry metrics in text exposition format. */
@Public()
@Controller('metrics')
export class MetricsController {
  @Get()
  metrics(@Req() request: Request, @Res() response: Response): void {
    if (!serveMetrics(request, response)) {
      throw new HealthError(
        HealthErrorCode.MetricsDisabled,
        'telemetry is disabled (OTEL_SDK_DISABLED=true)',
      );
    }
  }
}
