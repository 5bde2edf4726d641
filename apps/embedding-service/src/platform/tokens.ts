export { EVENT_PRODUCER, KAFKA } from '@kb/kafka';
export { BLOB_STORE } from '@kb/storage';
export const EMBEDDER = Symbol('EMBEDDER');
