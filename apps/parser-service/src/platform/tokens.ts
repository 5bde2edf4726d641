export { EVENT_PRODUCER, KAFKA } from '@kb/kafka';
export { BLOB_STORE } from '@kb/storage';
export const TOKEN_COUNTER = Symbol('TOKEN_COUNTER');
export const TEXT_EXTRACTOR = Symbol('TEXT_EXTRACTOR');
