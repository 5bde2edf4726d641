export * from './knowledge-base-label';
export * from './logger';
export * from './server-timing';
export * from './telemetry';
