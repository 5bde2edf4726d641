/** Nest injection tokens of the Kafka client and the event producer, one per process. */
export const KAFKA = Symbol('KAFKA');
export const EVENT_PRODUCER = Symbol('EVENT_PRODUCER');
