export * from './consumers.host';
export * from './dead-letter';
export * from './errors';
export * from './event-consumer';
export * from './event-producer';
export * from './kafka';
export * from './tenant-scope';
