/** Injection tokens for the service's external adapters. */
export const DB = Symbol('DB');
export const BLOB_STORE = Symbol('BLOB_STORE');
export const KAFKA = Symbol('KAFKA');
export const EVENT_PRODUCER = Symbol('EVENT_PRODUCER');
export const CLOCK = Symbol('CLOCK');
/** The tenants' index generations (`@kb/index-state`), which search results are cached under. */
export const GENERATIONS = Symbol('GENERATIONS');

export type Clock = () => Date;
