import { DomainError, ErrorKind, isTransient } from '@kb/errors';
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
 * A readiness condition: a name and a probe that resolves true when satisfied, and false or
 * throws when not (the thrown error gives the reason: a `NotReadyError`'s message, or the kind of
 * failure, never its text, which may name hosts).
 */
export interface ReadinessCheck {
  name: string;
  check(): Promise<boolean>;
  /** What `/health/ready` tells about it besides, under its name (e.g. which model is loaded). */
  details?(): unknown;
  /**
   * False for a dependency the service degrades without (a fail-open cache): reported under
   * `degraded`, but the service stays ready (ADR 17). Default true.
   */
  critical?: boolean;
}

/** Thrown by a check with a reason safe to show on the public probe. */
export class NotReadyError extends Error {
  override name = 'NotReadyError';
}

export const READINESS_CHECKS = Symbol('READINESS_CHECKS');

/** A probe that does not answer within this long counts as failed (a dependency that hangs). */
export const READINESS_TIMEOUT_MS = 2_000;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, boolean>;
  /** Why each failed check failed. */
  reasons: Record<string, string>;
  /** Failed checks the service works without. */
  degraded: string[];
}

@Injectable()
export class Readiness {
  constructor(@Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[]) {}

  async evaluate(): Promise<ReadinessReport> {
    const results = await Promise.all(
      this.checks.map(async (c) => ({ check: c, ...(await probe(c)) })),
    );
    const report: ReadinessReport = { ready: true, checks: {}, reasons: {}, degraded: [] };
    for (const { check, ok, reason } of results) {
      report.checks[check.name] = ok;
      if (ok) continue;
      report.reasons[check.name] = reason;
      if (check.critical === false) report.degraded.push(check.name);
      else report.ready = false;
    }
    return report;
  }

  /** Each describing check's details, by name; undefined when no check describes itself. */
  details(): Record<string, unknown> | undefined {
    const described = this.checks.filter((c) => c.details);
    if (described.length === 0) return undefined;
    return Object.fromEntries(described.map((c) => [c.name, c.details?.()]));
  }
}

/** What `GET /health/ready` answers when ready (not ready: a 503 with the same in `details`). */
export interface ReadyAnswer {
  status: 'ready';
  checks: Record<string, boolean>;
  /** Failed checks the service works without, with why. */
  degraded?: Record<string, string>;
  /** Present when a check describes itself (`ReadinessCheck.details`), keyed by its name. */
  details?: Record<string, unknown>;
}

async function probe(check: ReadinessCheck): Promise<{ ok: boolean; reason: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new NotReadyError(`no answer within ${READINESS_TIMEOUT_MS} ms`)),
      READINESS_TIMEOUT_MS,
    );
  });
  try {
    const ok = await Promise.race([check.check(), timeout]);
    return { ok, reason: ok ? '' : 'not ready' };
  } catch (error) {
    return { ok: false, reason: reasonOf(error) };
  } finally {
    clearTimeout(timer);
  }
}

/** A failure's kind in words, without its text (which may name hosts, ports or SQL). */
function reasonOf(error: unknown): string {
  if (error instanceof NotReadyError || error instanceof DomainError) return error.message;
  const code = (error as { code?: unknown } | null)?.code;
  const kind = typeof code === 'string' ? code : error instanceof Error ? error.name : 'error';
  return isTransient(error) ? `unreachable (${kind})` : `failed (${kind})`;
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

  /**
   * 200 while every critical dependency answers; 503 `not_ready` with the reasons while one is
   * away (the service keeps running and reconnects: it is taken out of rotation, not restarted).
   */
  @Get('ready')
  async ready(): Promise<ReadyAnswer> {
    const { ready, checks, reasons, degraded } = await this.readiness.evaluate();
    const details = this.readiness.details();
    if (!ready) {
      throw new HealthError(HealthErrorCode.NotReady, 'service is not ready', {
        checks,
        reasons,
        ...(details ? { details } : {}),
      });
    }
    return {
      status: 'ready',
      checks,
      ...(degraded.length
        ? { degraded: Object.fromEntries(degraded.map((name) => [name, reasons[name]!])) }
        : {}),
      ...(details ? { details } : {}),
    };
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
