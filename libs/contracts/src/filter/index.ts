export * from './conformance-cases';
export * from './filter';
export * from './filter-match';
export * from './inactive';
