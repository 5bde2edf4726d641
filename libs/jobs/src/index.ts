export * from './lease-queue';
export * from './queue-worker';
