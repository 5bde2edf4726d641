export * from './database';
export * from './migrator';
