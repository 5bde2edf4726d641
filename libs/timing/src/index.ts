export * from './backoff';
export * from './periodic';
