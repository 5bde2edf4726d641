export * from './api-error';
export * from './api-error.filter';
export * from './zod-body';
export * from './health';
export * from './bootstrap';
export * from './resources';
export * from './openapi';
export * from './auth';
