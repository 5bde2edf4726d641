import { ConsoleLogger, type LogLevel } from '@nestjs/common';

import { currentTraceIds } from './telemetry';

const LEVELS: Record<string, LogLevel[]> = {
  debug: ['debug', 'log', 'warn', 'error', 'fatal'],
  info: ['log', 'warn', 'error', 'fatal'],
  warn: ['warn', 'error', 'fatal'],
  error: ['error', 'fatal'],
};

/** Nest's JSON console logger, plus the active trace and span ids on every line. */
class TracingJsonLogger extends ConsoleLogger {
  protected override getJsonLogObject(
    message: unknown,
    options: {
      context: string;
      logLevel: LogLevel;
      writeStreamType?: 'stdout' | 'stderr';
      errorStack?: unknown;
    },
  ) {
    return { ...super.getJsonLogObject(message, options), ...currentTraceIds() };
  }
}

/** One JSON object per line on stdout, so log shippers need no parsing rules. */
export function createLogger(service: string, level = 'info'): ConsoleLogger {
  return new TracingJsonLogger(service, {
    json: true,
    colors: false,
    logLevels: LEVELS[level] ?? LEVELS['info'],
  });
}
