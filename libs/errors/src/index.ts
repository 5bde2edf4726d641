export * from './domain-error';
export * from './error-class';
export * from './error-status';
export * from './quota-exceeded';
