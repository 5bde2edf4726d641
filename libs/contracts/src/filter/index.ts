export * from './conformance-cases';
export * from './filter';
