export * from './filter';
export * from './conformance-cases';
