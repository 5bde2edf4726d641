export * from './abortable-query';
export * from './database';
export * from './filter-sql';
export * from './migrate.cli';
export * from './migration-plan';
export * from './migrator';
