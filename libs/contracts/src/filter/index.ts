export * from './conformance-cases';
export * from './filter';
export * from './inactive';
