export * from './knowledge-base.port';
export * from './knowledge-base.tools';
export * from './knowledge-base-rest.client';
