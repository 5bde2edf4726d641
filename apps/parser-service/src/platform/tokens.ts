export const KAFKA = Symbol('KAFKA');
export const EVENT_PRODUCER = Symbol('EVENT_PRODUCER');
export const BLOB_STORE = Symbol('BLOB_STORE');
export const TOKEN_COUNTER = Symbol('TOKEN_COUNTER');
export const TEXT_EXTRACTOR = Symbol('TEXT_EXTRACTOR');
