/** Injection tokens for the service's external adapters. */
export const DB = Symbol('DB');
export const BLOB_STORE = Symbol('BLOB_STORE');
export const KAFKA = Symbol('KAFKA');
export const EVENT_PRODUCER = Symbol('EVENT_PRODUCER');
export const CLOCK = Symbol('CLOCK');

export type Clock = () => Date;
