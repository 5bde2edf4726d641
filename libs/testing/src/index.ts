// In-memory fakes of the platform ports, for unit tests that run without servers. Each one passes
// the same conformance suite as the real adapter it stands in for.
export * from './blob-store/memory-blob-store';
export * from './event-producer/memory-event-producer';
export * from './index-state/memory-document-index-state';
export * from './index-state/memory-index-generations';
export * from './jobs/memory-lease-queue';
export * from './lexical-index/memory-lexical-index';
export * from './vector-store/memory-vector-store';
