export const KAFKA = Symbol('KAFKA');
export const EVENT_PRODUCER = Symbol('EVENT_PRODUCER');
export const BLOB_STORE = Symbol('BLOB_STORE');
export const EMBEDDER = Symbol('EMBEDDER');
