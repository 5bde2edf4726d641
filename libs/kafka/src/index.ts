export * from './kafka';
export * from './event-producer';
export * from './event-consumer';
export * from './errors';
export * from './dead-letter';
export * from './consumers.host';
