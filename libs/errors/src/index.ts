export * from './domain-error';
export * from './error-status';
