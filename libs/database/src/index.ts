export * from './database';
export * from './migrator';
export * from './migration-plan';
export * from './migrate.cli';
export * from './filter-sql';
