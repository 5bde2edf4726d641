export * from './database';
export * from './migrator';
export * from './filter-sql';
