export * from './rate-limit.errors';
export * from './rate-limiter';
