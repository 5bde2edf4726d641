export { EVENT_PRODUCER, KAFKA } from '@kb/kafka';
export { BLOB_STORE } from '@kb/storage';
export const VECTOR_STORE = Symbol('VECTOR_STORE');
export const LEXICAL_INDEX = Symbol('LEXICAL_INDEX');
export const GENERATIONS = Symbol('GENERATIONS');
export const INDEX_STATE = Symbol('INDEX_STATE');
export const SEARCH_CACHE_PURGER = Symbol('SEARCH_CACHE_PURGER');
