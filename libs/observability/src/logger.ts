import { ConsoleLogger, type LogLevel } from '@nestjs/common';

const LEVELS: Record<string, LogLevel[]> = {
  debug: ['debug', 'log', 'warn', 'error', 'fatal'],
  info: ['log', 'warn', 'error', 'fatal'],
  warn: ['warn', 'error', 'fatal'],
  error: ['error', 'fatal'],
};

/** One JSON object per line on stdout, so log shippers need no parsing rules. */
export function createLogger(service: string, level = 'info'): ConsoleLogger {
  return new ConsoleLogger(service, {
    json: true,
    colors: false,
    logLevels: LEVELS[level] ?? LEVELS['info'],
  });
}
